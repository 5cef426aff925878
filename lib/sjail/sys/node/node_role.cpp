// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/node/node_role.hpp"

#include "sjail/core/node/node_role.hpp"
#include "sjail/sys/process_scan.hpp"

#include <array>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace sjail {

bool slurmd_runs_here() {
    struct stat own {};
    if (::stat("/proc/self/ns/uts", &own) != 0) {
        return false;
    }
    bool found = false;
    std::array<char, 4096> link{};
    for_each_process([&](std::int64_t /*pid*/, const std::string &dir) {
        struct stat st {};
        struct stat uts {};
        if (::stat(dir.c_str(), &st) != 0 || st.st_uid != 0 ||
            ::stat((dir + "/ns/uts").c_str(), &uts) != 0 || uts.st_ino != own.st_ino ||
            uts.st_dev != own.st_dev) {
            return true;
        }
        const ssize_t n = ::readlink((dir + "/exe").c_str(), link.data(), link.size());
        found = n > 0 && is_slurmd_exe(std::string_view(link.data(), static_cast<std::size_t>(n)));
        return !found;
    });
    return found;
}

} // namespace sjail
