// SPDX-License-Identifier: Apache-2.0
#include "kit/child.hpp"

#include "kit/files.hpp"

#include <cerrno>
#include <exception>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace kit {

bool ChildReport::exited_cleanly() const {
    return wait_status >= 0 && WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0;
}

ChildReport run_child(const std::function<std::string()> &fn) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
        return {-1, errno_text("pipe")};
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(fds[0]);
        std::string result;
        try {
            result = fn();
        } catch (const std::exception &e) {
            result = std::string("exception: ") + e.what();
        }
        ::_exit(write_all(fds[1], result.data(), result.size()) ? 0 : 1);
    }
    ::close(fds[1]);
    if (pid < 0) {
        ::close(fds[0]);
        return {-1, errno_text("fork")};
    }
    ChildReport report;
    report.text = read_to_end(fds[0]);
    ::close(fds[0]);
    while (::waitpid(pid, &report.wait_status, 0) < 0 && errno == EINTR) {
    }
    return report;
}

std::string in_child(const std::function<std::string()> &fn) {
    const ChildReport report = run_child(fn);
    if (!report.exited_cleanly()) {
        return "child died (status " + std::to_string(report.wait_status) + "): " + report.text;
    }
    return report.text;
}

} // namespace kit
