// SPDX-License-Identifier: Apache-2.0
#include "job_owner.hpp"

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
}

#include <string>

namespace sjail {

Status check_job_owner(std::uint32_t job, uid_t uid) {
    static const bool initialised = [] {
        slurm_init(nullptr);
        return true;
    }();
    (void)initialised;
    job_info_msg_t *info = nullptr;
    if (slurm_load_job(&info, job, SHOW_ALL) != SLURM_SUCCESS || info == nullptr) {
        const int err = slurm_get_errno();
        return Status::failure("asking slurmctld about job " + std::to_string(job) +
                               " failed: " + slurm_strerror(err));
    }
    Status verdict = Status::failure("slurmctld does not know job " + std::to_string(job));
    for (std::uint32_t i = 0; i < info->record_count; ++i) {
        const slurm_job_info_t &record = info->job_array[i];
        if (record.job_id != job) {
            continue;
        }
        if (record.user_id != uid) {
            verdict = Status::failure("job " + std::to_string(job) + " belongs to uid " +
                                      std::to_string(record.user_id) + ", not to uid " +
                                      std::to_string(uid));
        } else if ((record.job_state & JOB_STATE_BASE) != JOB_RUNNING) {
            verdict = Status::failure("job " + std::to_string(job) + " is not running");
        } else {
            verdict = Status();
        }
        break;
    }
    slurm_free_job_info_msg(info);
    return verdict;
}

} // namespace sjail
