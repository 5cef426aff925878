// SPDX-License-Identifier: Apache-2.0
// What of a Config shapes the node's namespace, as text and as a digest: the
// value of every settings.hpp row that shapes the view. Pure.
#pragma once

#include "sjail/core/config.hpp"

#include <string>

namespace sjail {

// A canonical one-line description of everything that shapes the node
// namespace. When it changes, the prepared namespace is stale.
std::string fingerprint(const Config &config);

// The fingerprint's digest (core/digest.hpp), computed without building its
// text: what a step compares with the node watch's token.
std::string fingerprint_digest(const Config &config);

} // namespace sjail
