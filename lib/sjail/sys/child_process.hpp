// SPDX-License-Identifier: Apache-2.0
// Talking to a forked child that builds something (the node's namespace, a
// job's namespaces) under a deadline: one pipe to report on, one to hold it
// until the caller has kept what it built.
#pragma once

#include "sjail/core/builder_report.hpp"
#include "sjail/core/status.hpp"
#include "sjail/sys/fd.hpp"

#include <chrono>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace sjail {

using ChildClock = std::chrono::steady_clock;

struct Pipe {
    Fd read;
    Fd write;
};
Status make_pipe(Pipe &p);

// Writes all of `text`, through EINTR and short writes (best effort). Does
// not allocate.
void write_all(int fd, std::string_view text) noexcept;

// Reads everything until EOF; false when the deadline passed first. Reads
// interrupted by signals are retried. Past `max_kept` bytes the rest is read
// and dropped, so a chatty child never blocks on a full pipe.
bool read_until_eof(int fd, ChildClock::time_point deadline, std::string &out,
                    std::size_t max_kept = 65536);

// Reads one line ending in '\n' (no deadline: for a child of a child that the
// caller's deadline already bounds).
std::string read_line(int fd);

// Waits for the child until the deadline, or kills it when `timed_out` or
// the deadline passes.
BuilderEnd wait_child(pid_t pid, int pidfd, ChildClock::time_point deadline, int timeout_s,
                      bool timed_out);

// In a child just forked from a multithreaded process (slurmd): closes every
// inherited descriptor above 2 except `keep`. Other threads' pipes to their
// own children must not be held here, or each child waits on the other's
// until the deadline.
void close_inherited_fds(std::initializer_list<int> keep) noexcept;

// The same for any number of descriptors, sorted before the fork.
void close_inherited_fds(const std::vector<int> &sorted_keep) noexcept;

// An fd for waiting on `pid` with poll (pidfd_open).
Fd open_pidfd(pid_t pid);

// Runs `work` in a detached grandchild and returns as soon as the child in
// between has ended: the caller (a daemon that must not be delayed) is
// never the grandchild's parent and never waits for it. The grandchild ends
// with _exit(0) after `work`, also when it throws. False when the first fork
// failed.
bool run_detached(const std::function<void()> &work) noexcept;

// A child that builds something, seen from its parent. The child writes its
// report on one pipe, then waits on a second (the hold pipe) while the
// parent keeps what it built; closing the hold pipe lets it end. Everything
// runs under one deadline, counted from start().
class BuilderChild {
  public:
    // What the child runs once forked: it reports on `report_fd`, then calls
    // finish_report(report_fd, hold_fd) and ends with _exit; never returns.
    using Body = std::function<void(int report_fd, int hold_fd)>;

    // Makes the pipes and forks. The child keeps stdin/out/err, its own pipe
    // ends and the descriptors in `keep` (any order; -1 ignored), nothing
    // else. `what` names the child in the error when fork fails.
    Status start(const char *what, int timeout_s, std::vector<int> keep, const Body &body);

    // Reads the child's report until EOF or the deadline.
    void read_report();
    [[nodiscard]] const std::string &report() const { return report_; }
    // False when the deadline passed before the report ended.
    [[nodiscard]] bool reported_in_time() const { return in_time_; }
    [[nodiscard]] pid_t pid() const { return pid_; }

    // Sends `word` to the waiting child on the hold pipe.
    void tell(std::string_view word);

    // Closes the hold pipe and waits for the child until the deadline, or
    // kills it when the report was late or the deadline passes.
    BuilderEnd finish();

  private:
    pid_t pid_ = -1;
    Fd pidfd_;
    Fd report_read_;
    Fd hold_write_;
    ChildClock::time_point deadline_{};
    int timeout_s_ = 0;
    std::string report_;
    bool in_time_ = false;
};

// In the child, after its report: closes `report_fd` and waits for the
// parent on `hold_fd`. Returns the first byte the parent sent, or '\0' when
// it closed the pipe without a word. Does not allocate.
char finish_report(int report_fd, int hold_fd) noexcept;

} // namespace sjail
