// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/node/jail_policy.hpp"

#include "sjail/core/arch.hpp"

namespace sjail {

std::string multiarch() {
    return std::string(kBuildArch.multiarch);
}

std::vector<std::string> jail_system_paths() {
    const std::string lib = std::string("/usr/lib/") + multiarch();
    return {
        "/",
        "/etc",
        "/etc/nsswitch.conf",
        "/etc/passwd",
        "/etc/group",
        "/etc/ld.so.cache",
        "/etc/ld.so.conf",
        "/etc/ld.so.conf.d",
        "/etc/ld.so.preload",
        "/etc/pam.d",
        "/etc/security",
        "/etc/localtime",
        "/bin",
        "/sbin",
        "/lib",
        "/lib64",
        "/usr",
        "/usr/bin",
        "/usr/sbin",
        "/usr/lib",
        "/usr/lib64",
        lib,
        lib + "/security",
        lib + "/gconv",
        "/usr/lib/locale",
        "/usr/share",
        "/usr/share/zoneinfo",
        "/usr/local",
        "/usr/local/bin",
        "/usr/local/sbin",
        "/usr/local/lib",
    };
}

} // namespace sjail
