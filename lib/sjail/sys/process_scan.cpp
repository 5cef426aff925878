// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/process_scan.hpp"

#include "sjail/core/whole_number.hpp"

#include <dirent.h>
#include <string_view>

namespace sjail {

void for_each_process(const std::function<bool(std::int64_t pid, const std::string &dir)> &visit) {
    DIR *proc = ::opendir("/proc");
    if (proc == nullptr) {
        return;
    }
    while (const dirent *e = ::readdir(proc)) {
        const std::string_view name = e->d_name;
        const auto pid = whole_number<std::int64_t>(name);
        if (!pid || *pid <= 0) {
            continue; // not a process
        }
        if (!visit(*pid, "/proc/" + std::string(name))) {
            break;
        }
    }
    ::closedir(proc);
}

} // namespace sjail
