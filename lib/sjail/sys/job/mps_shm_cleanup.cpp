// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/job/mps_shm_cleanup.hpp"

#include "sjail/sys/fd.hpp"
#include "sjail/sys/gpu/mps_shm.hpp"
#include "sjail/sys/job/job_user.hpp"
#include "sjail/sys/tree_remove.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <set>
#include <string>
#include <sys/stat.h>
#include <vector>

namespace sjail {
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
