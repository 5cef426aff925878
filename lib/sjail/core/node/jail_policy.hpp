// SPDX-License-Identifier: Apache-2.0
// Which paths of the shared jail root code on the node depends on. Pure.
//
// Once slurmstepd's thread is in the jail, root code resolves names through
// the jail's NSS configuration and modules, loads PAM modules, gconv and
// locale data from it, and runs UnkillableStepProgram from it. So, as sshd
// does for ChrootDirectory, the plugin refuses a jail in which any of these
// is not owned by root or is writable by group or others: one such file
// would be root on every node that mounts the jail.
#pragma once

#include <string>
#include <vector>

namespace sjail {

// The node's multiarch library directory name, e.g. "x86_64-linux-gnu"
// (the build's architecture: kBuildArch).
std::string multiarch();

// Absolute paths inside the jail, parents before children. A path missing
// from the jail is fine (nothing there can be loaded); one that exists must
// pass the ownership rule.
std::vector<std::string> jail_system_paths();

} // namespace sjail
