// SPDX-License-Identifier: Apache-2.0
// What the node's jail namespace would be built from now, as its stamp
// (node_stamp.hpp): the plugin file, the jail directory, what every bind
// source of the mount plan resolves to and the node's GPU driver. The system
// side of the stamp; node_namespace.cpp compares it with STATE/stamp.
#pragma once

#include "sjail/core/builder_report.hpp"
#include "sjail/core/config.hpp"
#include "sjail/core/status.hpp"
#include "sjail/sys/gpu_view.hpp"

#include <string>

namespace sjail {

// The jail directory's identity, after the same ownership checks as a build.
Status identify_jail(const Config &config, FileId &jail);

// The stamp a namespace built now would have, and the GPU driver it would get.
Status stamp_now(const Config &config, const FileId &jail, std::string &stamp, NodeGpu &gpu);

// The same, after opening the jail (root-owned and closed to others all the
// way up) and identifying it: what every step computes before it joins the
// kept namespace (benchmarks measure its cost).
Status current_stamp(const Config &config, std::string &stamp, FileId &jail);

} // namespace sjail
