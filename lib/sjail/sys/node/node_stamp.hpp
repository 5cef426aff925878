// SPDX-License-Identifier: Apache-2.0
// What the node's jail namespace would be built from now, as its stamp
// (node_stamp.hpp): the plugin file, the jail directory, what every bind
// source of the mount plan resolves to and the node's GPU driver. The system
// side of the stamp; node_namespace.cpp compares it with STATE/stamp.
#pragma once

#include "sjail/core/config.hpp"
#include "sjail/core/file_id.hpp"
#include "sjail/core/status.hpp"
#include "sjail/sys/fd.hpp"
#include "sjail/sys/gpu/gpu_view.hpp"
#include "sjail/sys/node/jail_probe.hpp"
#include "sjail/sys/safe_open.hpp"

#include <string>

namespace sjail {

// The jail directory as a step finds it (`id`, and its fd in `root`), after
// the same ownership checks as a build: from the node's kernel alone, its
// lookup and attribute caches (cached_stat.hpp), nothing on the way asking
// the jail's server, so that a hung server cannot hang the step.
// Refused there, it is checked again after a probe (at most one per step)
// has refreshed the kernel's view within build_timeout=; when the kernel
// could not find the jail alone and the server does not answer, the
// probe's failure names the filesystem.
Status find_jail(const Config &config, JailFilesystem &filesystem, FileId &id, Fd &root);

// The file this library was loaded from (chroot.so, pam_slurm_jail.so, a
// program), as the loader names it; "" when unknown.
std::string plugin_file();

// What a namespace built now would be made from, found once per step: a
// step that must rebuild uses the same (nothing is looked for twice).
struct CurrentStamp {
    std::string stamp; // what STATE/stamp holds for a namespace built now
    FileId jail;       // the jail directory's identity
    NodeGpu gpu;       // the node's GPU driver the build binds
};

// After opening the jail (root-owned and closed to others all the way up)
// and identifying it: what every step computes before it joins the kept
// namespace (benchmarks measure its cost).
[[nodiscard]] Status current_stamp(const Config &config, CurrentStamp &now);

// The stamp again from `now`'s jail and driver, with every bind source
// identified afresh: a rebuild takes it after making the node-local
// directories (tmp=, ...) that are bind sources themselves.
void restamp_sources(const Config &config, CurrentStamp &now);

} // namespace sjail
