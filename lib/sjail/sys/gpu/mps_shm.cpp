// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/gpu/mps_shm.hpp"

#include "sjail/core/path_rules.hpp"
#include "sjail/sys/job/job_user.hpp"
#include "sjail/sys/safe_open.hpp"
#include "sjail/sys/tree_remove.hpp"

#include <cerrno>
#include <dirent.h>
#include <fcntl.h>
#include <set>
#include <string>
#include <sys/stat.h>
#include <vector>

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

namespace {

// The entries of the directory `dir` owned by a uid that is not root's and
// not in `running` (the users of the node's jobs).
std::vector<std::string> left_by_gone_users(int dir, const std::set<uid_t> &running) {
    std::vector<std::string> names;
    DIR *list = ::fdopendir(::openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (list == nullptr) {
        return names;
    }
    while (const dirent *e = ::readdir(list)) {
        const std::string name = e->d_name;
        struct stat st {};
        if (name == "." || name == ".." ||
            ::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
            continue;
        }
        if (st.st_uid != 0 && running.count(st.st_uid) == 0) {
            names.push_back(name);
        }
    }
    ::closedir(list);
    return names;
}

} // namespace

void clean_mps_shm(const Config &config) {
    Fd where;
    if (!open_mps_shm(config, where).ok() || !where.valid()) {
        return;
    }
    const Fd dir(::openat(where.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dir.valid()) {
        return;
    }
    const auto running = users_of_jobs(config.state_dir);
    if (!running) {
        return;
    }
    for (const auto &name : left_by_gone_users(dir.get(), *running)) {
        (void)remove_tree(dir.get(), name);
    }
}

} // namespace sjail
