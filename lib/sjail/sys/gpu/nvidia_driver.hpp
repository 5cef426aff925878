// SPDX-License-Identifier: Apache-2.0
// Finding the node's NVIDIA driver; nvidia_driver_mount.hpp mounts it into a
// jail view.
#pragma once

#include "sjail/core/gpu/nvidia_driver.hpp"
#include "sjail/core/gpu_mode.hpp"
#include "sjail/core/status.hpp"
#include "sjail/sys/fd.hpp"

#include <string>
#include <sys/stat.h>
#include <vector>

namespace sjail {

struct DriverSearch {
    GpuMode mode = GpuMode::Auto;
    // Where to look, first match wins. A root holding etc/ld.so.cache is read
    // through that cache (the node itself, or a driver container's root
    // filesystem such as /run/nvidia/driver); a root without one is read as
    // the container toolkit lays a driver out: lib64/ (or lib/) and bin/ (as
    // /usr/local/nvidia), its libraries taken only when their ELF headers say
    // they are built for the node's architecture (kBuildArch), as the cache
    // says it for a root that has one: a root that holds another
    // architecture's libcuda.so.1 or libnvidia-ml.so.1 only is an error.
    std::vector<std::string> roots = {"/", "/run/nvidia/driver", "/usr/local/nvidia"};
    // CUDA_MPS_PIPE_DIRECTORY of the node's MPS control daemon, if one runs.
    std::string mps_pipe_dir = "/tmp/nvidia-mps";
    // A memo a previous search left (driver_memo.hpp): its candidates stand
    // in for reading the loader cache when the cache is still the same file.
    std::string memo;
};

struct NodeDriver {
    std::string root;               // the root the driver was found under
    std::string version;            // empty: no driver (mode auto)
    std::vector<DriverFile> files;  // libraries, binaries, IPC directories, data files
    std::vector<Fd> fds;            // O_PATH fd of files[i], opened as checked
    std::vector<std::string> notes; // what was ignored or left out, and why
    std::string memo;               // of the loader cache consulted, "" when none was

    [[nodiscard]] bool found() const { return !version.empty(); }
};

FileIdentity file_identity(const struct stat &st);

// Finds and opens the driver's files (see gpu_driver.hpp for which). Every
// directory on the way is root-owned and closed to group and others, a
// symlink is followed only when root placed it, and a soname link only
// within its own directory. A driver found in a place a user controls is an
// error in every mode: binding it would hand that user every GPU job.
Status discover_node_driver(const DriverSearch &search, NodeDriver &out);

} // namespace sjail
