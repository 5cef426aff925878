// SPDX-License-Identifier: Apache-2.0
// The node's kept jail namespace as a step holds it, however it was joined:
// after the full check (node_namespace.hpp) or through the node watch
// (node_watch.hpp).
#pragma once

#include "sjail/core/file_id.hpp"
#include "sjail/sys/fd.hpp"

#include <cstdint>
#include <string>

namespace sjail {

struct NodeNamespace {
    Fd fd;                        // the kept mount namespace
    FileId jail;                  // what "/" must be inside it
    std::string stamp;            // what it was built from (node_stamp.hpp)
    bool watched = false;         // joined through the node watch, without the full check
    std::uint64_t generation = 0; // the jail generation "/" is (0: a single-directory jail)
};

} // namespace sjail
