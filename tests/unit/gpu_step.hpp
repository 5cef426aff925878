// SPDX-License-Identifier: Apache-2.0
// A step on a sandbox GPU node (gpu_sandbox.hpp), as the plugin runs one:
// a forked task enters the node's jail namespace (built when needed) and
// runs a program there. For the root-level tests of the gpu= settings.
#pragma once

#include "sjail/core/config.hpp"

#include <map>
#include <string>
#include <vector>

namespace gpu_step {

// The jail's mount point of the driver tree and its library directory.
inline const std::string kLib64 = "/usr/local/nvidia/lib64";

// The jail image's version-independent link /usr/local/bin/nvidia-smi ->
// /usr/local/nvidia/bin/nvidia-smi, as images/jail/finalize-rootfs makes it.
void add_nvidia_smi_link(const std::string &jail);

// The host's cat(1) in the jail's /usr/local/bin (it needs only the C
// library, which the sandbox jail has), for steps that read a file.
void add_cat(const std::string &jail);

// Runs argv as a task of a step would: in a forked child that enters the
// node's jail namespace (building it when needed), with a plain PATH. Its
// exit status; 125 with "ENTRY FAILED: why" in `output` when entry failed.
int run_as_step(const sjail::Config &config, const std::vector<std::string> &argv,
                std::string &output);

// What a job on this node sees of the driver, checked: both libraries by
// name (dlopen), a normally linked CUDA program, and nvidia-smi on the PATH
// reporting `version`. "" when all hold, else the first that failed.
std::string expect_driver(const sjail::Config &config, const std::string &version,
                          const std::string &cuda);

// "" when `jail` holds exactly the entries of `before` (gpu_sandbox::snapshot),
// else the first difference.
std::string jail_changes(const std::string &jail, const std::map<std::string, std::string> &before);

} // namespace gpu_step
