// SPDX-License-Identifier: Apache-2.0
#include "forward.hpp"

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/spank.h> // slurm_error
}

#include "sjail/abi/job_container_table.h"
#include "sjail/sys/job/dead_end.hpp"

#include <atomic>
#include <dlfcn.h>

namespace sjail::forward {
namespace {

using Table = sjail_job_container_calls;

// chroot.so's table, checked once per process; null (after logging why) when
// chroot.so is not loaded or comes from another build.
const Table *chroot_so(const char *type) {
    static std::atomic<const Table *> checked{nullptr};
    if (const Table *table = checked.load(); table != nullptr) {
        return table;
    }
    void *handle = ::dlopen("chroot.so", RTLD_LAZY | RTLD_NOLOAD);
    void *symbol = handle == nullptr ? nullptr : ::dlsym(handle, SJAIL_JOB_CONTAINER_TABLE);
    if (symbol == nullptr) {
        slurm_error("%s: chroot.so is not loaded in this process; put it in plugstack.conf "
                    "(see chroot.so(8))",
                    type);
        return nullptr;
    }
    const auto get = reinterpret_cast<decltype(&sjail_job_container_table)>(symbol);
    const Table *found = get();
    if (found->version != SJAIL_JOB_CONTAINER_TABLE_VERSION || found->size != sizeof(Table)) {
        slurm_error("%s: chroot.so comes from another build (its table is version %u, %u "
                    "bytes; this plugin needs version %u, %zu bytes); install both plugins "
                    "from the same slurm-jail build",
                    type, found->version, found->size, SJAIL_JOB_CONTAINER_TABLE_VERSION,
                    sizeof(Table));
        return nullptr;
    }
    checked.store(found);
    return found;
}

} // namespace

int check_loaded(const char *type) {
    return chroot_so(type) == nullptr ? SLURM_ERROR : SLURM_SUCCESS;
}

// A failed join must not leave the child where it is: Slurm ignores the
// failure for job scripts. Calls for uid 0 are slurmd's and slurmstepd's own
// programs (the SPANK job prolog/epilog runner, UnkillableStepProgram), which
// run on the node: they are left where they are. (A root job's tasks are
// still jailed by chroot.so's SPANK callbacks.)
int join(const char *type, std::uint32_t job, uid_t uid) {
    if (job == 0 || uid == 0) {
        return SLURM_SUCCESS;
    }
    const Table *chroot = chroot_so(type);
    if (chroot == nullptr) {
        (void)sjail::enter_dead_end(nullptr, nullptr);
        return SLURM_ERROR;
    }
    return chroot->join(job) == 0 ? SLURM_SUCCESS : SLURM_ERROR;
}

int join_external(const char *type, std::uint32_t job) {
    const Table *chroot = chroot_so(type);
    return chroot == nullptr ? -1 : chroot->join_external(job);
}

int remove(const char *type, std::uint32_t job) {
    const Table *chroot = chroot_so(type);
    return chroot != nullptr && chroot->remove(job) == 0 ? SLURM_SUCCESS : SLURM_ERROR;
}

// chroot.so's own slurmd start also deletes what crashed jobs left.
int restore(const char *type) {
    const Table *chroot = chroot_so(type);
    return chroot == nullptr || chroot->restore() == 0 ? SLURM_SUCCESS : SLURM_ERROR;
}

} // namespace sjail::forward
