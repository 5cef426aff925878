// SPDX-License-Identifier: Apache-2.0
// Every process of the node, as /proc lists them.
#pragma once

#include <cstdint>
#include <dirent.h>
#include <fcntl.h>
#include <functional>
#include <string>

namespace sjail {

// Calls `visit(pid, dir)` for each process in /proc ("/proc/PID" as `dir`)
// until it returns false. Processes may exit meanwhile: `visit` must expect
// their files to be gone.
void for_each_process(const std::function<bool(std::int64_t pid, const std::string &dir)> &visit);

// Calls `each(name)` with every pid entry of the /proc directory fd `proc`
// (the node's, or a job's own) until it returns false. No allocation.
template <typename Each> void for_each_pid(int proc, Each each) noexcept {
    DIR *dir = ::fdopendir(::openat(proc, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dir == nullptr) {
        return;
    }
    while (const dirent *e = ::readdir(dir)) {
        if (e->d_name[0] >= '1' && e->d_name[0] <= '9' && !each(e->d_name)) {
            break;
        }
    }
    ::closedir(dir);
}

} // namespace sjail
