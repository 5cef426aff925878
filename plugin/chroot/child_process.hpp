// Talking to a forked child that builds something (the node's namespace, a
// job's namespaces) under a deadline: one pipe to report on, one to hold it
// until the caller has kept what it built.
#pragma once

#include "builder_report.hpp"
#include "fd.hpp"
#include "status.hpp"

#include <chrono>
#include <initializer_list>
#include <string>
#include <sys/types.h>
#include <vector>

namespace sjail {

using ChildClock = std::chrono::steady_clock;

struct Pipe {
    Fd read;
    Fd write;
};
Status make_pipe(Pipe &p);

// Writes all of `text`, through EINTR and short writes (best effort).
void write_all(int fd, const std::string &text);

// Reads everything until EOF; false when the deadline passed first. Reads
// interrupted by signals are retried.
bool read_until_eof(int fd, ChildClock::time_point deadline, std::string &out);

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

} // namespace sjail
