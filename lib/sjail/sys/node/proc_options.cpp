// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/node/proc_options.hpp"

#include "sjail/sys/fs_mount.hpp"
#include "sjail/sys/small_file.hpp"

#include <cerrno>
#include <fcntl.h>
#include <grp.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace sjail {
namespace {

Status resolve_group(ProcOptions &options) {
    if (options.gid.empty() || options.gid.find_first_not_of("0123456789") == std::string::npos) {
        return {};
    }
    struct group gr {};
    struct group *found = nullptr;
    std::vector<char> buf(16384);
    if (::getgrnam_r(options.gid.c_str(), &gr, buf.data(), buf.size(), &found) != 0 ||
        found == nullptr) {
        return Status::failure("proc=: group '" + options.gid +
                               "' does not exist on this node; create it or give a gid");
    }
    options.gid = std::to_string(found->gr_gid);
    return {};
}

std::string format_proc_options(const ProcOptions &options) {
    std::string text;
    for (const auto &[key, value] : proc_mount_parameters(options)) {
        text += (text.empty() ? "" : ",") + key + "=" + value;
    }
    return text;
}

} // namespace

Status node_proc_super_options(std::string &out) {
    struct statx stx {};
    if (::statx(AT_FDCWD, "/proc", AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_MNT_ID, &stx) !=
            0 ||
        (stx.stx_mask & STATX_MNT_ID) == 0) {
        return Status::from_errno("statx /proc (its mount id)");
    }
    const Fd fd = open_regular("/proc/self/mountinfo", O_RDONLY);
    if (!fd.valid()) {
        return Status::from_errno("open /proc/self/mountinfo");
    }
    constexpr std::size_t kLimit = 64UL << 20;
    std::string text;
    char buf[8192];
    while (text.size() < kLimit) {
        const ssize_t n = ::read(fd.get(), buf, sizeof(buf));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            return Status::from_errno("read /proc/self/mountinfo");
        }
        if (n == 0) {
            break;
        }
        text.append(buf, static_cast<std::size_t>(n));
        if (auto options = super_options_of_mount(text, stx.stx_mnt_id)) {
            out = std::move(*options);
            return {};
        }
    }
    return Status::failure("/proc (mount " + std::to_string(stx.stx_mnt_id) +
                           ") is not in /proc/self/mountinfo");
}

Status resolve_proc_options(const Config &config, ProcOptions &out) {
    if (config.proc_options.empty()) {
        std::string super;
        if (node_proc_super_options(super).ok()) {
            out = proc_options_of(super);
        } else {
            out = node_proc_options(read_small_file("/proc/self/mountinfo", 64 << 20));
        }
        return {};
    }
    if (auto s = parse_proc_setting(config.proc_options, out); !s.ok()) {
        return s;
    }
    return resolve_group(out);
}

Status save_proc_options(const std::string &state_dir, const ProcOptions &options) {
    return write_file_atomically(state_dir + "/proc-options", format_proc_options(options));
}

Status load_proc_options(const Config &config, ProcOptions &out) {
    const std::string path = config.state_dir + "/proc-options";
    if (::access(path.c_str(), F_OK) != 0) {
        return resolve_proc_options(config, out);
    }
    const std::string text = read_small_file(path);
    if (text.empty()) {
        out = {};
        return {};
    }
    return parse_proc_setting(text, out);
}

Status make_proc_mount(const ProcOptions &options, Fd &out) {
    const auto parameters = proc_mount_parameters(options);
    std::vector<FsParam> params;
    params.reserve(parameters.size());
    for (const auto &[key, value] : parameters) {
        params.push_back({key.c_str(), value.c_str()});
    }
    return make_mount("proc", params, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
                      out);
}

} // namespace sjail
