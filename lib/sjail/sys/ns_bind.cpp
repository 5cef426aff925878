// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/ns_bind.hpp"

#include "sjail/sys/fd.hpp"

#include <cerrno>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>

namespace sjail {

int bind_namespace_of(pid_t pid, const char *kind, const std::string &path) {
    const std::string source = "/proc/" + std::to_string(pid) + "/ns/" + kind;
    Fd tree(::open_tree(AT_FDCWD, source.c_str(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC));
    Fd target(::open(path.c_str(), O_PATH | O_CLOEXEC | O_NOFOLLOW));
    if (!tree.valid() || !target.valid() ||
        ::move_mount(tree.get(), "", target.get(), "",
                     MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0) {
        return errno;
    }
    return 0;
}

std::vector<int> cpus_to_try() {
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    (void)::sched_getaffinity(0, sizeof(allowed), &allowed);
    std::vector<int> cpus = {::sched_getcpu()};
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (CPU_ISSET(static_cast<std::size_t>(cpu), &allowed) && cpu != cpus.front()) {
            cpus.push_back(cpu);
        }
    }
    return cpus;
}

void let_parent_bind_namespaces() {
    (void)::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
}

void pin_to_cpu(int cpu) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(static_cast<std::size_t>(cpu), &one);
    (void)::sched_setaffinity(0, sizeof(one), &one);
}

} // namespace sjail
