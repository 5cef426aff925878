// SPDX-License-Identifier: Apache-2.0
// Whether su enters the jail: slurmd runs "su - USER" on a compute node's
// own root for jobs that ask for the user's login environment (sbatch
// --get-user-env), and su runs the user's shell startup files. Pure.
#pragma once

#include <string_view>

namespace sjail::check {

// Whether a PAM stack file's text (/etc/pam.d/su) runs pam_slurm_jail.so in
// its session phase as `required` or `requisite` (so that su fails when the
// jail cannot be entered): a "session" line whose module is
// pam_slurm_jail.so or a path to it. @include lines are not followed.
bool su_enters_jail(std::string_view pam_text);

} // namespace sjail::check
