// SPDX-License-Identifier: Apache-2.0
#include "dcgm_run.hpp"

#include "child_env.hpp"
#include "subprocess.hpp"
#include "trusted_files.hpp"

#include <cstring>

namespace sjh {

DcgmRun run_dcgmi(const std::string &dcgmi, unsigned level, std::chrono::milliseconds timeout) {
    DcgmRun run;
    const auto found = find_trusted_program(dcgmi);
    if (found.error != 0) {
        run.not_found = std::strerror(found.error);
        return run;
    }
    run.found = true;
    CommandOptions opts;
    opts.timeout = timeout;
    opts.merge_stderr = true;
    opts.environment = child_environment(current_environment(), {}, {});
    const auto r = run_command({found.path, "diag", "-r", std::to_string(level), "-j"}, opts);
    run.started = r.started;
    run.exec_error = r.exec_error;
    run.exit_code = r.exit_code;
    run.signal = r.signal;
    run.timed_out = r.timed_out;
    run.output = r.out;
    return run;
}

} // namespace sjh
