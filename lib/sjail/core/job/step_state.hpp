// SPDX-License-Identifier: Apache-2.0
// Where one step stands with the jail, as its slurmstepd goes through the
// SPANK callbacks and the job container's calls. Pure: no system calls.
//
//   Undecided --run_on_node_root()--> OnNodeRoot   (an allowed --no-jail)
//   Undecided --entered()----------> InJail
//   Undecided, InJail --refuse(why)--> Refused
//   any --ran_out_of_memory()------> OutOfMemory
//
// OnNodeRoot, Refused and OutOfMemory are final: nothing turns a refused
// step into one that runs, and a step that runs on the node's root is never
// refused later (its tasks are already where they run). What each state
// means for a task, or for a script that joins the job, is `for_task()`.
#pragma once

#include <string>

namespace sjail {

enum class StepPhase {
    Undecided,  // init_post_opt has not decided yet
    OnNodeRoot, // the step runs where it is
    InJail,     // slurmstepd's thread is in the job's views
    Refused,    // the step may not run; `refusal()` says why
    OutOfMemory // refused, with no message kept (allocation-free)
};

enum class TaskVerdict {
    RunWhereItIs, // the step runs on the node's root (allowed --no-jail)
    EnterJail,    // move the task into the job's tasks view
    Refuse,       // do not start it; report `task_refusal()`
};

class StepState {
  public:
    void run_on_node_root() noexcept;
    void entered() noexcept;
    // Keeps the first reason: a later failure does not hide the cause.
    void refuse(std::string reason);
    void ran_out_of_memory() noexcept;

    [[nodiscard]] StepPhase phase() const noexcept { return phase_; }
    [[nodiscard]] bool in_jail() const noexcept { return phase_ == StepPhase::InJail; }
    [[nodiscard]] TaskVerdict for_task() const noexcept;
    [[nodiscard]] const std::string &refusal() const noexcept { return reason_; }

    // The one line a refused task (or job script) is reported with.
    [[nodiscard]] std::string task_refusal(const std::string &step_name) const;

  private:
    StepPhase phase_ = StepPhase::Undecided;
    std::string reason_;
};

} // namespace sjail
