// SPDX-License-Identifier: Apache-2.0
#include "subprocess.hpp"

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

namespace sjh {
namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void exec_child(const std::vector<std::string> &argv, const CommandOptions &opts,
                             int out_w, int err_w, int status_w) {
    ::setpgid(0, 0);
    ::dup2(out_w, STDOUT_FILENO);
    ::dup2(opts.merge_stderr ? out_w : err_w, STDERR_FILENO);
    const int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (devnull >= 0) {
        ::dup2(devnull, STDIN_FILENO);
    }
    const auto pointers = [](const std::vector<std::string> &strings) {
        std::vector<char *> out;
        out.reserve(strings.size() + 1);
        for (const auto &s : strings) {
            out.push_back(const_cast<char *>(s.c_str())); // NOLINT: exec takes char *const[]
        }
        out.push_back(nullptr);
        return out;
    };
    auto args = pointers(argv);
    if (opts.environment) {
        auto env = pointers(*opts.environment);
        ::execve(args[0], args.data(), env.data());
    } else {
        for (const auto &kv : opts.extra_env) {
            ::putenv(const_cast<char *>(kv.c_str())); // NOLINT: child only, strings outlive exec
        }
        ::execvp(args[0], args.data());
    }
    const int err = errno;
    const auto written = ::write(status_w, &err, sizeof err);
    (void)written; // nothing more to do if the parent is gone
    ::_exit(127);
}

void drain_into(int fd, std::string &buf, bool &open) {
    std::array<char, 65536> chunk{};
    const auto n = ::read(fd, chunk.data(), chunk.size());
    if (n > 0) {
        buf.append(chunk.data(), static_cast<std::size_t>(n));
    } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        open = false;
    }
}

} // namespace

std::vector<std::string> current_environment() {
    std::vector<std::string> out;
    for (char **e = environ; e != nullptr && *e != nullptr; ++e) {
        out.emplace_back(*e);
    }
    return out;
}

CommandResult run_command(const std::vector<std::string> &argv, const CommandOptions &opts) {
    CommandResult r;
    int out_p[2];
    int err_p[2];
    int st_p[2];
    if (argv.empty() || ::pipe2(out_p, O_CLOEXEC) != 0 || ::pipe2(err_p, O_CLOEXEC) != 0 ||
        ::pipe2(st_p, O_CLOEXEC) != 0) {
        r.exec_error = argv.empty() ? "empty command" : std::strerror(errno);
        return r;
    }
    const pid_t pid = ::fork();
    if (pid < 0) {
        r.exec_error = std::strerror(errno);
        return r;
    }
    if (pid == 0) {
        exec_child(argv, opts, out_p[1], err_p[1], st_p[1]);
    }
    ::setpgid(pid, pid);
    ::close(out_p[1]);
    ::close(err_p[1]);
    ::close(st_p[1]);
    int child_errno = 0;
    r.started = ::read(st_p[0], &child_errno, sizeof child_errno) != sizeof child_errno;
    ::close(st_p[0]);
    if (!r.started) {
        r.exec_error = std::strerror(child_errno);
    }
    const auto deadline = Clock::now() + opts.timeout;
    bool out_open = true;
    bool err_open = true;
    while (out_open || err_open) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        if (left.count() <= 0) {
            r.timed_out = true;
            ::kill(-pid, SIGKILL);
            break;
        }
        std::array<pollfd, 2> fds{pollfd{out_open ? out_p[0] : -1, POLLIN, 0},
                                  pollfd{err_open ? err_p[0] : -1, POLLIN, 0}};
        const int n = ::poll(fds.data(), fds.size(), static_cast<int>(left.count()));
        if (n < 0 && errno != EINTR) {
            break;
        }
        if (out_open && (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
            drain_into(out_p[0], r.out, out_open);
        }
        if (err_open && (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
            drain_into(err_p[0], r.err, err_open);
        }
    }
    ::close(out_p[0]);
    ::close(err_p[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (r.timed_out) {
        ::kill(-pid, SIGKILL); // grandchildren still in the group
    }
    if (WIFEXITED(status)) {
        r.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        r.signal = WTERMSIG(status);
    }
    return r;
}

} // namespace sjh
