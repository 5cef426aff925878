// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/gpu/mps_shm.hpp"

#include "sjail/core/path_rules.hpp"
#include "sjail/sys/safe_open.hpp"

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>

namespace sjail {

Status open_mps_shm(const Config &config, Fd &out) {
    out.reset();
    if (config.gpu == GpuMode::Off || config.gpu_mps_shm.empty()) {
        return {};
    }
    const std::string &dir = config.gpu_mps_shm;
    const auto fail = [&dir](const Status &s) {
        return Status::failure("gpu_mps_shm=" + dir + ": " + s.message());
    };
    Fd parent;
    if (auto s = open_root_owned_dir(parent_dir(dir), parent); !s.ok()) {
        return fail(s);
    }
    Fd opened(::openat(parent.get(), base_name(dir).c_str(),
                       O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!opened.valid()) {
        if (errno == ENOENT) {
            return {}; // no MPS daemon on this node
        }
        return fail(Status::from_errno("open " + dir + " (a directory, not a symlink)"));
    }
    struct stat st {};
    if (::fstat(opened.get(), &st) != 0) {
        return fail(Status::from_errno("stat " + dir));
    }
    if (auto s = check_shared_root_dir(dir, st.st_uid, st.st_mode); !s.ok()) {
        return fail(s);
    }
    out = std::move(opened);
    return {};
}

} // namespace sjail
