// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/node_role.hpp"

#include "sjail/core/job_layout.hpp"
#include "sjail/core/node_role.hpp"

#include <array>
#include <dirent.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace sjail {

bool slurmd_runs_here() {
    struct stat own {};
    if (::stat("/proc/self/ns/uts", &own) != 0) {
        return false;
    }
    DIR *proc = ::opendir("/proc");
    if (proc == nullptr) {
        return false;
    }
    bool found = false;
    std::array<char, 4096> link{};
    while (const dirent *e = ::readdir(proc)) {
        if (!job_of_entry(e->d_name)) {
            continue; // not a pid
        }
        const std::string dir = std::string("/proc/") + e->d_name;
        struct stat st {};
        struct stat uts {};
        if (::stat(dir.c_str(), &st) != 0 || st.st_uid != 0 ||
            ::stat((dir + "/ns/uts").c_str(), &uts) != 0 || uts.st_ino != own.st_ino ||
            uts.st_dev != own.st_dev) {
            continue;
        }
        const ssize_t n = ::readlink((dir + "/exe").c_str(), link.data(), link.size());
        if (n > 0 && is_slurmd_exe(std::string_view(link.data(), static_cast<std::size_t>(n)))) {
            found = true;
            break;
        }
    }
    ::closedir(proc);
    return found;
}

} // namespace sjail
