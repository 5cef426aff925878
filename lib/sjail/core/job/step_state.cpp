// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/job/step_state.hpp"

#include <utility>

namespace sjail {

void StepState::run_on_node_root() noexcept {
    if (phase_ == StepPhase::Undecided) {
        phase_ = StepPhase::OnNodeRoot;
    }
}

void StepState::entered() noexcept {
    if (phase_ == StepPhase::Undecided) {
        phase_ = StepPhase::InJail;
    }
}

void StepState::refuse(std::string reason) {
    if (phase_ != StepPhase::Undecided && phase_ != StepPhase::InJail) {
        return;
    }
    phase_ = StepPhase::Refused;
    reason_ = std::move(reason);
}

void StepState::ran_out_of_memory() noexcept {
    phase_ = StepPhase::OutOfMemory;
}

TaskVerdict StepState::for_task() const noexcept {
    switch (phase_) {
    case StepPhase::OnNodeRoot:
        return TaskVerdict::RunWhereItIs;
    case StepPhase::InJail:
        return TaskVerdict::EnterJail;
    case StepPhase::Undecided:
    case StepPhase::Refused:
    case StepPhase::OutOfMemory:
        break;
    }
    return TaskVerdict::Refuse;
}

std::string StepState::task_refusal(const std::string &step_name) const {
    if (phase_ == StepPhase::OutOfMemory) {
        return "task not started: the step ran out of memory entering the jail";
    }
    if (phase_ == StepPhase::Undecided) {
        return step_name + ": task not started: the plugin never prepared this step (no "
                           "init_post_opt callback reached chroot.so)";
    }
    return step_name + ": task not started, jail entry failed: " + reason_;
}

} // namespace sjail
