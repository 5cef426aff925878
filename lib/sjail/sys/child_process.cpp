// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/child_process.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace sjail {
namespace {

// Milliseconds left until `deadline`, at least 0.
int ms_left(ChildClock::time_point deadline) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - ChildClock::now()).count();
    return left > 0 ? static_cast<int>(left) : 0;
}

} // namespace

void close_inherited_fds(std::initializer_list<int> keep) noexcept {
    // No allocation after fork: a small array, kept sorted as it is filled.
    std::array<unsigned, 8> kept{};
    std::size_t n = 0;
    for (const int fd : keep) {
        if (fd <= 2 || n == kept.size()) {
            continue;
        }
        std::size_t at = n++;
        for (; at > 0 && kept[at - 1] > static_cast<unsigned>(fd); --at) {
            kept[at] = kept[at - 1];
        }
        kept[at] = static_cast<unsigned>(fd);
    }
    unsigned from = 3;
    for (std::size_t i = 0; i < n; ++i) {
        if (kept[i] > from) {
            (void)::syscall(SYS_close_range, from, kept[i] - 1, 0U);
        }
        from = std::max(from, kept[i] + 1);
    }
    (void)::syscall(SYS_close_range, from, ~0U, 0U);
}

void close_inherited_fds(const std::vector<int> &sorted_keep) noexcept {
    unsigned from = 3;
    for (const int fd : sorted_keep) {
        if (fd < 3) {
            continue;
        }
        const auto keep = static_cast<unsigned>(fd);
        if (keep > from) {
            (void)::syscall(SYS_close_range, from, keep - 1, 0U);
        }
        from = std::max(from, keep + 1);
    }
    (void)::syscall(SYS_close_range, from, ~0U, 0U);
}

Status make_pipe(Pipe &p) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
        return Status::from_errno("pipe");
    }
    p.read.reset(fds[0]);
    p.write.reset(fds[1]);
    return {};
}

void write_all(int fd, std::string_view text) noexcept {
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return;
        }
        done += static_cast<std::size_t>(n);
    }
}

bool read_until_eof(int fd, ChildClock::time_point deadline, std::string &out,
                    std::size_t max_kept) {
    char buf[1024];
    while (true) {
        pollfd p{fd, POLLIN, 0};
        const int ready = ::poll(&p, 1, ms_left(deadline));
        if (ready < 0 && errno == EINTR) {
            continue;
        }
        if (ready <= 0) {
            return false; // deadline
        }
        const ssize_t n = ::read(fd, buf, sizeof(buf));
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
            continue;
        }
        if (n <= 0) {
            return true; // EOF (or an error, which the judge reports as no result)
        }
        if (out.size() < max_kept) {
            out.append(buf, std::min(static_cast<std::size_t>(n), max_kept - out.size()));
        }
    }
}

std::string read_line(int fd) {
    std::string line;
    char c = 0;
    while (line.size() < 65536) {
        const ssize_t n = ::read(fd, &c, 1);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        line += c;
        if (c == '\n') {
            break;
        }
    }
    return line;
}

BuilderEnd wait_child(pid_t pid, int pidfd, ChildClock::time_point deadline, int timeout_s,
                      bool timed_out) {
    BuilderEnd end;
    end.timeout_s = timeout_s;
    if (!timed_out) {
        pollfd p{pidfd, POLLIN, 0};
        while (true) {
            const int ready = ::poll(&p, 1, ms_left(deadline));
            if (ready < 0 && errno == EINTR) {
                continue;
            }
            timed_out = ready == 0;
            break;
        }
    }
    if (timed_out) {
        ::kill(pid, SIGKILL);
        end.kind = BuilderEnd::Kind::TimedOut;
        pollfd p{pidfd, POLLIN, 0};
        (void)::poll(&p, 1, 1000); // a child stuck in the kernel may never die; don't wait for it
        int status = 0;
        (void)::waitpid(pid, &status, WNOHANG);
        return end;
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFSIGNALED(status)) {
        end.kind = BuilderEnd::Kind::Signaled;
        end.code = WTERMSIG(status);
    } else {
        end.code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    }
    return end;
}

Fd open_pidfd(pid_t pid) {
    return Fd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
}

bool run_detached(const std::function<void()> &work) noexcept {
    const pid_t child = ::fork();
    if (child < 0) {
        return false;
    }
    if (child == 0) {
        if (::fork() == 0) {
            try {
                work();
            } catch (...) {
            }
            ::_exit(0);
        }
        ::_exit(0);
    }
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    return true;
}

Status BuilderChild::start(const char *what, int timeout_s, std::vector<int> keep,
                           const Body &body) {
    Pipe report;
    Pipe hold;
    if (auto s = make_pipe(report); !s.ok()) {
        return s;
    }
    if (auto s = make_pipe(hold); !s.ok()) {
        return s;
    }
    timeout_s_ = timeout_s;
    deadline_ = ChildClock::now() + std::chrono::seconds(timeout_s);
    // Sorted before the fork: the child closes the rest without allocating.
    keep.push_back(report.write.get());
    keep.push_back(hold.read.get());
    std::sort(keep.begin(), keep.end());
    pid_ = ::fork();
    if (pid_ == 0) {
        close_inherited_fds(keep);
        body(report.write.get(), hold.read.get());
        ::_exit(1); // the body never returns
    }
    if (pid_ < 0) {
        const int err = errno;
        return Status::from_errno(std::string("fork ") + what, err);
    }
    pidfd_ = open_pidfd(pid_);
    report_read_ = std::move(report.read);
    hold_write_ = std::move(hold.write);
    return {};
}

void BuilderChild::read_report() {
    in_time_ = read_until_eof(report_read_.get(), deadline_, report_);
}

void BuilderChild::tell(std::string_view word) {
    write_all(hold_write_.get(), word);
}

BuilderEnd BuilderChild::finish() {
    hold_write_.reset(); // the child may exit now
    return wait_child(pid_, pidfd_.get(), deadline_, timeout_s_, !in_time_);
}

char finish_report(int report_fd, int hold_fd) noexcept {
    ::close(report_fd);
    char byte = 0;
    ssize_t n = 0;
    while ((n = ::read(hold_fd, &byte, 1)) < 0 && errno == EINTR) {
    }
    return n == 1 ? byte : '\0';
}

} // namespace sjail
