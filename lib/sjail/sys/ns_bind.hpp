// SPDX-License-Identifier: Apache-2.0
// Keeping a namespace alive on a file (an nsfs bind mount), shared by the
// node namespace's builder and the jobs' namespaces.
//
// The kernel refuses (ELOOP) to bind a mount namespace that looks older than
// the caller's, to prevent reference loops. Namespace ids come from per-CPU
// batches, so a namespace made on another CPU can look older although it is
// newer. Making it again on another CPU gives it an id from that CPU's
// batch: callers build on each CPU of `cpus_to_try()` in turn until the bind
// is not refused with ELOOP.
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

namespace sjail {

// Binds /proc/PID/ns/KIND ("mnt", "pid") onto the existing file `path`.
// Returns 0 or an errno value.
int bind_namespace_of(pid_t pid, const char *kind, const std::string &path);

// The CPUs this process may run on, the current one first.
std::vector<int> cpus_to_try();

// Called first in a child whose namespaces the parent will bind: binding
// /proc/PID/ns/KIND needs ptrace read access to the child, which a process
// that is not dumpable (sshd makes itself so, and its children inherit it)
// grants only to CAP_SYS_PTRACE, which root in a container's user namespace
// lacks. The child is root's own; dumpable is the default for root daemons.
void let_parent_bind_namespaces();

// Pins the calling process to `cpu` (best effort).
void pin_to_cpu(int cpu);

} // namespace sjail
