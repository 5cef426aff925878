// SPDX-License-Identifier: Apache-2.0
// What the node's jail namespace was built from. Pure.
//
// STATE/stamp holds this text; a step joins the kept namespace only when the
// text it computes now is identical. Anything that changes what the
// namespace shows changes the text: the settings, the plugin itself, the
// jail directory, and the identity of every bind source (an unmounted source,
// a /etc/resolv.conf replaced by rename, a recreated munge directory), the
// options of the node's /proc (without proc=), and the node's GPU driver with
// the jail's loader cache (sys/gpu/gpu_view.hpp). A job's namespaces record the stamp
// of the node namespace they were made from (job_namespace.hpp).
#pragma once

#include "sjail/core/config.hpp"
#include "sjail/core/file_id.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sjail {

// A node path the namespace binds, as it resolved when it was checked.
struct SourceId {
    std::string path;
    FileId id;
    std::uint64_t mount_id = 0; // statx STATX_MNT_ID: a remount changes it
    bool operator==(const SourceId &) const = default;
};

// `gpu`: the GPU part (NodeGpu::stamp), appended as it is. `node_proc`: the
// super options of the node's /proc, which jobs' /proc take when proc= is not
// set (ignored when it is).
std::string namespace_stamp(const Config &config, const std::string &plugin_id, const FileId &jail,
                            const std::vector<SourceId> &sources, const std::string &gpu = "",
                            const std::string &node_proc = "");

// A short, stable digest of a stamp (core/digest.hpp): what a job's
// namespaces and the node watch's token record of the node namespace they
// go with, so that a step reads a line, not the whole stamp.
std::string stamp_digest(std::string_view stamp);

} // namespace sjail
