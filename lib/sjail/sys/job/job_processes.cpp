// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/job/job_processes.hpp"

#include "sjail/core/proc_stat.hpp"
#include "sjail/sys/child_process.hpp"
#include "sjail/sys/fd.hpp"
#include "sjail/sys/process_scan.hpp"
#include "sjail/sys/small_file.hpp"

#include <csignal>
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <utility>

namespace sjail {

std::optional<InitId> read_init(const JobPaths &paths) {
    return parse_init_id(read_small_file(paths.init));
}

bool is_running(const InitId &id) {
    const std::string stat = read_small_file("/proc/" + std::to_string(id.pid) + "/stat");
    const auto start = start_time_of_stat(stat);
    return start && *start == id.start_time && !has_ended_in_stat(stat);
}

std::string how_the_init_ended(const JobPaths &paths) {
    const auto init = read_init(paths);
    if (!init || is_running(*init)) {
        return "";
    }
    const std::string stat = read_small_file("/proc/" + std::to_string(init->pid) + "/stat");
    const auto start = start_time_of_stat(stat);
    const auto code = exit_code_of_stat(stat);
    std::string how = "its init (pid " + std::to_string(init->pid) + ")";
    if (start && *start == init->start_time && code) {
        return how + " was " + how_it_ended(*code);
    }
    return how + " is gone";
}

std::optional<InitId> identify(pid_t pid) {
    const auto start =
        start_time_of_stat(read_small_file("/proc/" + std::to_string(pid) + "/stat"));
    if (!start) {
        return std::nullopt;
    }
    return InitId{pid, *start};
}

void kill_init(const InitId &id) {
    const Fd pidfd = open_pidfd(id.pid);
    if (!pidfd.valid() || !is_running(id)) {
        return;
    }
    pollfd p{pidfd.get(), POLLIN, 0};
    for (const auto &[signal, wait_ms] : {std::pair{SIGTERM, 6000}, std::pair{SIGKILL, 5000}}) {
        (void)::syscall(SYS_pidfd_send_signal, pidfd.get(), signal, nullptr, 0);
        if (::poll(&p, 1, wait_ms) == 1) {
            return;
        }
    }
}

NodeProcesses scan_processes() {
    NodeProcesses seen;
    for_each_process([&seen](std::int64_t /*pid*/, const std::string &dir) {
        struct stat st {};
        if (::stat((dir + "/ns/pid").c_str(), &st) == 0) {
            seen.pid_namespaces.insert(st.st_ino);
        }
        // root's slurmstepd only: a user's process may call itself anything.
        const auto step = stepd_of_cmdline(read_small_file(dir + "/cmdline"));
        if (step && real_uid_of_status(read_small_file(dir + "/status")) == 0U) {
            seen.jobs_with_stepd.insert(step->job);
        }
        return true;
    });
    return seen;
}

bool job_is_alive(const JobPaths &paths, std::uint32_t job, const NodeProcesses &seen) {
    if (seen.jobs_with_stepd.count(job) != 0) {
        return true;
    }
    const auto init = read_init(paths);
    struct stat st {};
    if (!init || !is_running(*init) || ::stat(paths.pid_ns.c_str(), &st) != 0) {
        return false;
    }
    return seen.pid_namespaces.count(st.st_ino) > 1; // more than the init
}

} // namespace sjail
