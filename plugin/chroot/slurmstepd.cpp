// SPDX-License-Identifier: Apache-2.0
#include "slurmstepd.hpp"

#include "plugin_state.hpp"

extern "C" {
#include <slurm/slurm.h> // SLURM_BATCH_SCRIPT, SLURM_EXTERN_CONT, ...
}

#include "sjail/core/job/root_path_env.hpp"
#include "sjail/core/job/step_decision.hpp"
#include "sjail/sys/job/job_namespace.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <unistd.h>

namespace chroot_plugin {

using sjail::Status;

namespace {

std::string describe_step(spank_t sp) {
    std::uint32_t job = 0;
    std::uint32_t step = 0;
    if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS) {
        return "step";
    }
    std::string name = "StepId=" + std::to_string(job) + ".";
    switch (step) {
    case SLURM_BATCH_SCRIPT:
        return name + "batch";
    case SLURM_EXTERN_CONT:
        return name + "extern";
    case SLURM_INTERACTIVE_STEP:
        return name + "interactive";
    default:
        return name + std::to_string(step);
    }
}

void fail_step(std::string reason) {
    plugin.state.refuse(std::move(reason));
    slurm_error("chroot: %s: jail entry failed, no task will run: %s", plugin.step_name.c_str(),
                plugin.state.refusal().c_str());
    leave_for_dead_end();
}

// What the step does about the jail: true when it enters.
bool decide(spank_t sp) {
    uid_t uid = 0;
    (void)spank_get_item(sp, S_JOB_UID, &uid);
    sjail::StepFacts facts;
    facts.config = plugin.config_status;
    facts.no_jail_requested = plugin.no_jail_requested;
    facts.opt_out_allowed = plugin.no_jail_requested && opt_out_allowed(uid);
    facts.uid = static_cast<unsigned>(uid);
    const sjail::StepDecision decision = sjail::decide_step(facts);
    switch (decision.action) {
    case sjail::StepAction::NodeRoot:
        plugin.state.run_on_node_root();
        slurm_info("chroot: %s: %s", plugin.step_name.c_str(), decision.reason.c_str());
        return false;
    case sjail::StepAction::Refuse:
        fail_step(decision.reason);
        return false;
    case sjail::StepAction::Enter:
        break;
    }
    return true;
}

// Before mpi/pmix reads the step's environment (its slurmstepd prefork
// comes after init_post_opt in every release): what would become a path
// root makes goes, jailed step or not (root_path_env.hpp). False when one
// stays (the step is refused then).
bool remove_root_path_variables(spank_t sp) {
    for (const std::string_view name : sjail::kRootPathVariables) {
        const std::string var(name);
        std::array<char, 4096> value{};
        const spank_err_t got = spank_getenv(sp, var.c_str(), value.data(), value.size());
        if (got != ESPANK_SUCCESS && got != ESPANK_NOSPACE) {
            continue;
        }
        value.back() = '\0'; // ESPANK_NOSPACE: cut
        if (spank_unsetenv(sp, var.c_str()) != ESPANK_SUCCESS) {
            fail_step("cannot remove " + var + " from the step's environment");
            return false;
        }
        slurm_info("chroot: %s: %s", plugin.step_name.c_str(),
                   sjail::root_path_variable_removed(name, value.data()).c_str());
    }
    return true;
}

} // namespace

void prepare_step(spank_t sp) {
    plugin.step_name = describe_step(sp);
    if (!remove_root_path_variables(sp)) {
        return;
    }
    if (!decide(sp)) {
        return;
    }
    std::uint32_t job = 0;
    if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS) {
        fail_step("slurmstepd gave no job id");
        return;
    }
    uid_t uid = 0;
    (void)spank_get_item(sp, S_JOB_UID, &uid);
    if (Status s = sjail::enter_job_for_step(plugin.config, job, plugin.step, uid); !s.ok()) {
        fail_step(s.message());
        return;
    }
    plugin.state.entered();
    // The extern step forks its one process (which pam_slurm_adopt adopts
    // into) without a user_init before it: its fork window opens here and
    // closes at its task_post_fork.
    std::uint32_t step = 0;
    if (spank_get_item(sp, S_JOB_STEPID, &step) == ESPANK_SUCCESS && step == SLURM_EXTERN_CONT) {
        if (Status s = sjail::start_children_in_job(plugin.step); !s.ok()) {
            fail_step("the extern step's process cannot start in the job's PID namespace: " +
                      s.message());
        }
    }
}

int open_fork_window() {
    if (!plugin.state.in_jail()) {
        return 0; // refused steps: their tasks are refused one by one
    }
    if (Status s = sjail::start_children_in_job(plugin.step); !s.ok()) {
        slurm_error("chroot: %s: tasks will not start: %s", plugin.step_name.c_str(),
                    s.message().c_str());
        return -1;
    }
    return 0;
}

void close_fork_window() {
    sjail::stop_children_in_job(plugin.step);
    if (plugin.state.in_jail()) {
        if (Status s = sjail::move_on_to_stepd_view(plugin.step); !s.ok()) {
            slurm_error("chroot: %s: %s", plugin.step_name.c_str(), s.message().c_str());
            leave_for_dead_end();
        }
    }
}

void end_step() {
    sjail::stop_children_in_job(plugin.step);
}

int enter_task() {
    switch (plugin.state.for_task()) {
    case sjail::TaskVerdict::RunWhereItIs:
        return 0;
    case sjail::TaskVerdict::Refuse:
        report_task_refused();
        return -1;
    case sjail::TaskVerdict::EnterJail:
        break;
    }
    if (Status s = sjail::enter_tasks_view(plugin.step, sjail::PidCheck::Required); !s.ok()) {
        slurm_error("chroot: %s: task not started: %s", plugin.step_name.c_str(),
                    s.message().c_str());
        return -1;
    }
    return 0;
}

} // namespace chroot_plugin
