// SPDX-License-Identifier: Apache-2.0
// Whether su enters the jail before any of the user's code runs: slurmd runs
// "su - USER" on a compute node's own root for jobs that ask for the user's
// login environment (sbatch --get-user-env), and su runs the user's shell
// startup files once its session stack is done. Pure.
#pragma once

#include "pam_stack.hpp"

#include <string>
#include <vector>

namespace sjail::check {

struct SuStackVerdict {
    // A "session required" (or requisite) pam_slurm_jail.so line is in the
    // stack: su fails when the jail cannot be entered.
    bool enters_jail = false;
    // What comes before that line and defeats it, each a cause naming the
    // line and its file: a module that can end the stack early or jump over
    // it (su then runs the user's code on the node's own root), or one that
    // starts the user's processes on the node (pam_systemd, pam_exec).
    std::vector<std::string> before_jail;
};

SuStackVerdict judge_su_stack(const PamSessionStack &stack);

} // namespace sjail::check
