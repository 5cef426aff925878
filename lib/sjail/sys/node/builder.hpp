// SPDX-License-Identifier: Apache-2.0
// The builder: a child process that assembles the jail view in its own mount
// namespace (jail_view.hpp), after which its namespace is kept on STATE/ns.
//
// The protocol is explicit (builder_report.hpp): the child writes one line,
// a success token naming what "/" is after its pivot, or an error; the
// caller reads it with a deadline (reads retried on EINTR), keeps the
// namespace only after that line, then checks the child's exit status. A
// build that fails in any way is undone and never kept. No exception leaves
// the child: it ends with _exit, whatever happens.
#pragma once

#include "sjail/core/builder_report.hpp"
#include "sjail/core/config.hpp"
#include "sjail/core/node/mount_plan.hpp"
#include "sjail/core/status.hpp"
#include "sjail/sys/gpu/nvidia_driver.hpp"

#include <string>
#include <vector>

namespace sjail {

// Builds the view for `config` over the jail `jail` (its identity as the
// caller opened it), with the node's GPU `driver` when one was found
// (sys/gpu/gpu_view.hpp), and binds the builder's namespace on `ns_path`.
Status build_node_namespace(const Config &config, const std::vector<MountOp> &plan,
                            const NodeDriver &driver, const FileId &jail,
                            const std::string &ns_path);

#ifdef SJAIL_BUILDER_FAULTS
// Test builds only (the library sjail_sys_faults; chroot.so never has this):
// makes the next builders misbehave, so tests can see each refused.
enum class BuilderFault {
    None,
    Silent,     // exits 0 without a report
    Crash,      // dies of SIGSEGV before reporting
    Slow,       // builds normally, 300 ms late (the caller's reads get interrupted)
    NoPivot,    // reports success with its unpivoted "/"
    OkThenFail, // reports success, then exits 3
    Hang,       // never reports
};
void set_builder_fault(BuilderFault fault);
#endif

} // namespace sjail
