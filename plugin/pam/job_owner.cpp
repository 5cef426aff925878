// SPDX-License-Identifier: Apache-2.0
#include "job_owner.hpp"

#include "session_plan.hpp"
#include "sjail/sys/child_process.hpp"

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
}

#include <cerrno>
#include <chrono>
#include <csignal>
#include <dlfcn.h>
#include <fcntl.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace sjail {
namespace {

// slurm_load_job retries within MessageTimeout (10 s by default); sshd's
// LoginGraceTime (120 s by default) bounds the whole login.
constexpr std::chrono::seconds kQueryTimeout{30};

// libslurm's entry points, looked up by name in the child: the module is not
// linked to libslurm, so sshd never loads it.
struct Slurm {
    decltype(&slurm_init) init = nullptr;
    decltype(&slurm_load_job) load_job = nullptr;
    decltype(&slurm_free_job_info_msg) free_job_info_msg = nullptr;
    decltype(&slurm_strerror) strerror = nullptr;
};

template <typename F> bool lookup(void *lib, const char *name, F &out) {
    out = reinterpret_cast<F>(
        ::dlsym(lib, name)); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
    return out != nullptr;
}

std::string ask(std::uint32_t job, uid_t uid) {
    // Global: libslurm's plugins (auth, hash, ...) resolve its symbols from
    // the global scope, as in Slurm's own programs.
    void *lib = ::dlopen(SJAIL_LIBSLURM_SONAME, RTLD_NOW | RTLD_GLOBAL);
    if (lib == nullptr) {
        const char *why = ::dlerror();
        return std::string("no cannot load " SJAIL_LIBSLURM_SONAME ": ") +
               (why != nullptr ? why : "unknown error");
    }
    Slurm s;
    if (!lookup(lib, "slurm_init", s.init) || !lookup(lib, "slurm_load_job", s.load_job) ||
        !lookup(lib, "slurm_free_job_info_msg", s.free_job_info_msg) ||
        !lookup(lib, "slurm_strerror", s.strerror)) {
        return "no " SJAIL_LIBSLURM_SONAME " lacks an entry point this module needs";
    }
    s.init(nullptr);
    job_info_msg_t *info = nullptr;
    // libslurm reports its errors in errno (24.11 dropped slurm_get_errno,
    // which returned errno).
    if (s.load_job(&info, job, SHOW_ALL) != SLURM_SUCCESS || info == nullptr) {
        const int err = errno;
        return "no asking slurmctld about job " + std::to_string(job) +
               " failed: " + s.strerror(err);
    }
    std::string verdict = "no slurmctld does not know job " + std::to_string(job);
    for (std::uint32_t i = 0; i < info->record_count; ++i) {
        const slurm_job_info_t &record = info->job_array[i];
        if (record.job_id != job) {
            continue;
        }
        if (record.user_id != uid) {
            verdict = "no job " + std::to_string(job) + " belongs to uid " +
                      std::to_string(record.user_id) + ", not to uid " + std::to_string(uid);
        } else if ((record.job_state & JOB_STATE_BASE) != JOB_RUNNING) {
            verdict = "no job " + std::to_string(job) + " is not running";
        } else {
            verdict = "ok";
        }
        break;
    }
    s.free_job_info_msg(info);
    return verdict;
}

// The child: stdin and stdout on /dev/null, stderr (libslurm's and the
// loader's messages) and the verdict on `report_fd`, nothing else of sshd's.
[[noreturn]] void run_query(std::uint32_t job, uid_t uid, int report_fd) noexcept {
    const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null < 0 || ::dup2(null, STDIN_FILENO) < 0 || ::dup2(null, STDOUT_FILENO) < 0 ||
        ::dup2(report_fd, STDERR_FILENO) < 0) {
        ::_exit(1);
    }
    close_inherited_fds({});
    // The caller's handlers are not for this process.
    for (const int sig : {SIGCHLD, SIGPIPE, SIGTERM, SIGHUP, SIGINT, SIGALRM}) {
        (void)::signal(sig, SIG_DFL);
    }
    sigset_t none;
    sigemptyset(&none);
    (void)::sigprocmask(SIG_SETMASK, &none, nullptr);
    try {
        write_all(STDERR_FILENO, "\nsjail-verdict " + ask(job, uid) + "\n");
    } catch (...) {
        write_all(STDERR_FILENO, "\nsjail-verdict no out of memory\n");
    }
    ::_exit(0);
}

} // namespace

Status check_job_owner(std::uint32_t job, uid_t uid) {
    Pipe report;
    if (auto s = make_pipe(report); !s.ok()) {
        return s;
    }
    const pid_t pid = ::fork();
    if (pid < 0) {
        return Status::from_errno("fork the process that asks slurmctld");
    }
    if (pid == 0) {
        report.read.reset();
        run_query(job, uid, report.write.get());
    }
    report.write.reset();
    std::string output;
    const bool in_time =
        read_until_eof(report.read.get(), ChildClock::now() + kQueryTimeout, output);
    if (!in_time) {
        (void)::kill(pid, SIGKILL);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            return Status::from_errno("wait for the process that asks slurmctld");
        }
    }
    return judge_owner_query(output, in_time, status);
}

} // namespace sjail
