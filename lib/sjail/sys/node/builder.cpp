// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/node/builder.hpp"

#include "sjail/sys/child_process.hpp"
#include "sjail/sys/fd.hpp"
#include "sjail/sys/gpu/gpu_view.hpp"
#include "sjail/sys/node/jail_view.hpp"
#include "sjail/sys/ns_bind.hpp"

#include <cerrno>
#include <csignal>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace sjail {
namespace {

#ifdef SJAIL_BUILDER_FAULTS
BuilderFault g_fault = BuilderFault::None;

void fault_before_build() {
    switch (g_fault) {
    case BuilderFault::Silent:
        ::_exit(0);
    case BuilderFault::Crash:
        (void)::raise(SIGSEGV);
        ::_exit(1);
    case BuilderFault::Slow:
        ::usleep(300000);
        break;
    case BuilderFault::Hang:
        while (true) {
            ::pause();
        }
    default:
        break;
    }
}
#endif

// Unshares and builds the view, the node's GPU driver included; `root` is
// what "/" is afterwards.
Status build_in_child(const Config &config, const std::vector<MountOp> &plan,
                      const NodeDriver &driver, FileId &root) {
#ifdef SJAIL_BUILDER_FAULTS
    fault_before_build();
#endif
    if (::unshare(CLONE_NEWNS) != 0) {
        return Status::from_errno("unshare(CLONE_NEWNS)");
    }
#ifdef SJAIL_BUILDER_FAULTS
    if (g_fault == BuilderFault::NoPivot) {
        struct stat st {};
        (void)::stat("/", &st);
        root = file_id_of(st);
        return {};
    }
#endif
    Fd view;
    if (auto s = assemble_jail_view(config, plan, view); !s.ok()) {
        return s;
    }
    if (auto s = mount_node_gpu(config, view.get(), driver); !s.ok()) {
        return s;
    }
    return pivot_into_view(view.get(), root);
}

// The child. Reports, waits until the caller has kept its namespace (EOF on
// `hold_fd`), then ends with _exit.
[[noreturn]] void run_child(const Config &config, const std::vector<MountOp> &plan,
                            const NodeDriver &driver, int cpu, int report_fd,
                            int hold_fd) noexcept {
    int code = 1;
    try {
        let_parent_bind_namespaces();
        pin_to_cpu(cpu);
        FileId root;
        const Status s = build_in_child(config, plan, driver, root);
        write_all(report_fd,
                  s.ok() ? builder_success_line(root) : builder_failure_line(s.message()));
        code = s.ok() ? 0 : 1;
#ifdef SJAIL_BUILDER_FAULTS
        code = g_fault == BuilderFault::OkThenFail ? 3 : code;
#endif
    } catch (...) {
        write_all(report_fd, "sjail-builder error the builder ran out of memory\n");
    }
    (void)finish_report(report_fd, hold_fd);
    ::_exit(code);
}

// One builder pinned to `cpu`. On success the namespace is kept on `ns_path`;
// `bind_errno` tells why it could not be kept (ELOOP: try another CPU).
Status attempt_build(const Config &config, const std::vector<MountOp> &plan,
                     const NodeDriver &driver, const FileId &jail, const std::string &ns_path,
                     int cpu, int &bind_errno) {
    bind_errno = 0;
    // The child keeps the driver's files, opened as checked.
    std::vector<int> keep;
    keep.reserve(driver.fds.size());
    for (const auto &fd : driver.fds) {
        keep.push_back(fd.get());
    }
    BuilderChild child;
    if (auto s = child.start("the jail builder", config.build_timeout_s, std::move(keep),
                             [&](int report_fd, int hold_fd) {
                                 run_child(config, plan, driver, cpu, report_fd, hold_fd);
                             });
        !s.ok()) {
        return s;
    }
    child.read_report();
    if (child.reported_in_time() && child.report().starts_with("sjail-builder ok ")) {
        bind_errno = bind_namespace_of(child.pid(), "mnt", ns_path);
    }
    Status judged = judge_builder(child.report(), child.finish(), jail);
    if (!judged.ok() || bind_errno != 0) {
        (void)::umount2(ns_path.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW); // never keep it
    }
    return judged;
}

} // namespace

#ifdef SJAIL_BUILDER_FAULTS
void set_builder_fault(BuilderFault fault) {
    g_fault = fault;
}
#endif

// A bind refused with ELOOP is tried again on another CPU (see ns_bind.hpp).
Status build_node_namespace(const Config &config, const std::vector<MountOp> &plan,
                            const NodeDriver &driver, const FileId &jail,
                            const std::string &ns_path) {
    const std::vector<int> cpus = cpus_to_try();
    int bind_errno = 0;
    for (const int cpu : cpus) {
        if (auto s = attempt_build(config, plan, driver, jail, ns_path, cpu, bind_errno); !s.ok()) {
            return s;
        }
        if (bind_errno != ELOOP) {
            break;
        }
    }
    if (bind_errno != 0) {
        return Status::from_errno("keeping the jail namespace on " + ns_path, bind_errno);
    }
    return {};
}

} // namespace sjail
