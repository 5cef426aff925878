// SPDX-License-Identifier: Apache-2.0
#include "nccl_run.hpp"

#include "nvml_probe.hpp"
#include "trusted_files.hpp"

#include <chrono>
#include <cstring>
#include <fmt/format.h>
#include <sstream>
#include <stdexcept>

namespace sjh {

std::string find_all_reduce_perf(const std::string &binary) {
    const auto found = find_trusted_program(binary);
    if (found.error != 0) {
        throw std::runtime_error(fmt::format(
            "cannot run '{}': {}; install nccl-tests or pass --binary PATH (images/nccl-tests "
            "builds it for the jail)",
            binary, std::strerror(found.error)));
    }
    return found.path;
}

std::vector<std::string> build_argv(const std::string &binary, const std::string &args,
                                    unsigned gpus) {
    std::vector<std::string> argv{binary};
    std::istringstream in(args);
    std::string word;
    while (in >> word) {
        for (auto p = word.find("{gpus}"); p != std::string::npos; p = word.find("{gpus}")) {
            word.replace(p, 6, std::to_string(gpus));
        }
        argv.push_back(word);
    }
    return argv;
}

NcclRun nccl_run_of(const CommandResult &c, int timeout_s) {
    NcclRun run;
    run.exit_code = c.started ? c.exit_code : 1;
    run.signal = c.signal;
    run.timed_out = c.timed_out;
    run.timeout_s = timeout_s;
    return run;
}

void resolve_gpus(std::string &gpu_model, unsigned &gpus, const std::string &nvml_library) {
    if (!gpu_model.empty() && gpus > 0) {
        return;
    }
    const auto probe = probe_gpus(trusted_library(nvml_library), std::chrono::seconds(30));
    if (!probe.snapshot) {
        throw std::runtime_error(fmt::format(
            "cannot learn the GPU model and count from NVML ({}); pass --gpu-model and --gpus",
            probe.failure));
    }
    if (gpus == 0) {
        gpus = probe.snapshot->count;
    }
    if (gpu_model.empty() && !probe.snapshot->gpus.empty()) {
        gpu_model = probe.snapshot->gpus.front().name;
    }
}

std::vector<Threshold> threshold_table(const std::vector<std::string> &specs) {
    std::vector<Threshold> overrides;
    overrides.reserve(specs.size());
    for (const auto &spec : specs) {
        overrides.push_back(parse_threshold(spec));
    }
    return merge_thresholds(default_thresholds(), overrides);
}

Threshold required_threshold(const std::vector<Threshold> &table, const std::string &gpu_model,
                             unsigned gpus, unsigned nodes, const std::string &section) {
    if (auto t = find_threshold(table, gpu_model, gpus, nodes)) {
        return *t;
    }
    const auto where = nodes > 1 ? fmt::format(" on {} nodes", nodes) : std::string();
    const auto key =
        nodes > 1 ? fmt::format("MODELx{}x{}", gpus, nodes) : fmt::format("MODELx{}", gpus);
    throw std::runtime_error(
        fmt::format("no bandwidth threshold for '{}' x{}{}: add one, e.g. --threshold {}=GBPS "
                    "(threshold = ... in the [{}] config section)",
                    gpu_model, gpus, where, key, section));
}

} // namespace sjh
