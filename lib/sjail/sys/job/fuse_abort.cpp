// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/job/fuse_abort.hpp"

#include "sjail/core/job/fuse_conn.hpp"
#include "sjail/sys/fd.hpp"
#include "sjail/sys/process_scan.hpp"
#include "sjail/sys/small_file.hpp"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <string>
#include <string_view>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

namespace sjail {
namespace {

constexpr const char *kFusectl = "/sys/fs/fuse/connections";

// Reads DIR/PATH whole (up to 4 MiB: a mount table); "" when it cannot.
std::string read_below(int dir, const std::string &path) {
    const Fd fd(::openat(dir, path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    std::string text;
    if (!fd.valid() || !read_whole_file(fd.get(), path, text, 4UL << 20U).ok()) {
        return {};
    }
    return text;
}

// The FUSE connections in the mount tables of the job's processes.
std::set<std::uint64_t> job_connections(int job_proc) {
    std::set<std::uint64_t> found;
    for_each_pid(job_proc, [&](const char *pid) {
        found.merge(
            fuse_connections_of_mountinfo(read_below(job_proc, std::string(pid) + "/mountinfo")));
        return true;
    });
    return found;
}

// In the child: the node's own FUSE mounts are left alone; fusectl is
// mounted in a private copy of the node's view (it may not be on the node).
int abort_in_child(int job_proc, int node_mnt) {
    std::set<std::uint64_t> conns = job_connections(job_proc);
    if (conns.empty()) {
        return 0;
    }
    if (::setns(node_mnt, CLONE_NEWNS) != 0) {
        return -1;
    }
    for (const auto node_conn :
         fuse_connections_of_mountinfo(read_small_file("/proc/self/mountinfo", 4UL << 20U))) {
        conns.erase(node_conn);
    }
    if (conns.empty()) {
        return 0;
    }
    if (::unshare(CLONE_NEWNS) != 0 ||
        ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        ::mount("fusectl", kFusectl, "fusectl", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) {
        return -1;
    }
    int aborted = 0;
    for (const auto conn : conns) {
        const std::string path = std::string(kFusectl) + "/" + std::to_string(conn) + "/abort";
        const Fd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW));
        if (fd.valid() && ::write(fd.get(), "1", 1) == 1) {
            ++aborted;
        }
    }
    return aborted;
}

} // namespace

std::set<pid_t> stuck_dying_processes(int job_proc) noexcept {
    std::set<pid_t> stuck;
    try {
        for_each_pid(job_proc, [&](const char *pid) {
            if (std::string_view(pid) != "1" &&
                is_stuck_dying(read_below(job_proc, std::string(pid) + "/status"))) {
                stuck.insert(static_cast<pid_t>(std::stol(pid)));
            }
            return true;
        });
    } catch (...) {
    }
    return stuck;
}

int abort_job_fuse(int job_proc, int node_mnt) noexcept {
    const pid_t child = ::fork();
    if (child == 0) {
        int aborted = -1;
        try {
            aborted = abort_in_child(job_proc, node_mnt);
        } catch (...) {
        }
        ::_exit(aborted < 0 ? 255 : (aborted > 254 ? 254 : aborted));
    }
    if (child < 0) {
        return -1;
    }
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) == 255) {
        return -1;
    }
    return WEXITSTATUS(status);
}

} // namespace sjail
