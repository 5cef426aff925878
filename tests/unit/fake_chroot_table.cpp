// SPDX-License-Identifier: Apache-2.0
// A stand-in for chroot.so, for the job container shim's load check: it
// exports the shim's one table, at the version FAKE_TABLE_VERSION; its calls
// only count, and its tasks view is the made-up fd FAKE_TASKS_VIEW_FD.
#include "sjail/abi/job_container_table.h"

namespace {

int joins = 0;

int join(uint32_t /*job*/) {
    return ++joins > 0 ? 0 : -1;
}
int join_external(uint32_t /*job*/) {
    return FAKE_TASKS_VIEW_FD;
}
int remove_job(uint32_t /*job*/) {
    return 0;
}
int restore() {
    return 0;
}

const sjail_job_container_calls kTable = {FAKE_TABLE_VERSION,
                                          sizeof(sjail_job_container_calls),
                                          join,
                                          join_external,
                                          remove_job,
                                          restore};

} // namespace

extern "C" const sjail_job_container_calls *sjail_job_container_table() {
    return &kTable;
}
