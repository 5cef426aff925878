// SPDX-License-Identifier: Apache-2.0
#include "nccl_thresholds.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fmt/format.h>
#include <stdexcept>

namespace sjh {
namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

bool all_digits(std::string_view s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

[[noreturn]] void bad_threshold(std::string_view spec, std::string_view why) {
    throw std::invalid_argument(
        fmt::format("bad threshold '{}': {} (write MODELxGPUS=GBPS for one node or "
                    "MODELxGPUSxNODES=GBPS across nodes, for example H100x8=400 or H100x8x2=250)",
                    spec, why));
}

unsigned parse_count(std::string_view spec, std::string_view what, std::string_view text) {
    unsigned n = 0;
    const auto [p, e] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (e != std::errc{} || p != text.data() + text.size() || n == 0) {
        bad_threshold(spec, fmt::format("{} '{}' is not a positive integer", what, text));
    }
    return n;
}

} // namespace

std::string Threshold::key() const {
    return nodes <= 1 ? fmt::format("{}x{}", model, gpus)
                      : fmt::format("{}x{}x{}", model, gpus, nodes);
}

std::string Threshold::spec() const {
    return fmt::format("{}={:g}", key(), min_busbw);
}

Threshold parse_threshold(std::string_view spec) {
    const auto eq = spec.find('=');
    if (eq == std::string_view::npos) {
        bad_threshold(spec, "no '='");
    }
    const auto key = spec.substr(0, eq);
    const auto value = spec.substr(eq + 1);
    const auto x = key.rfind('x');
    if (x == std::string_view::npos || x == 0 || x + 1 == key.size()) {
        bad_threshold(spec, "the key must be MODELxGPUS or MODELxGPUSxNODES");
    }
    auto model = key.substr(0, x);
    auto gpus = key.substr(x + 1);
    std::string_view nodes;
    // MODELxGPUSxNODES: the part before the last 'x' ends in 'x' and digits.
    if (const auto x2 = model.rfind('x');
        x2 != std::string_view::npos && x2 > 0 && all_digits(model.substr(x2 + 1))) {
        nodes = gpus;
        gpus = model.substr(x2 + 1);
        model = model.substr(0, x2);
    }
    Threshold t;
    t.model = std::string(model);
    t.gpus = parse_count(spec, "GPU count", gpus);
    if (!nodes.empty()) {
        t.nodes = parse_count(spec, "node count", nodes);
    }
    const auto [p, e] = std::from_chars(value.data(), value.data() + value.size(), t.min_busbw);
    if (e != std::errc{} || p != value.data() + value.size() || !(t.min_busbw > 0)) {
        bad_threshold(spec, fmt::format("bandwidth '{}' is not a positive number of GB/s", value));
    }
    return t;
}

// One source comment per row; health/docs/nccl-thresholds.md has the links and the
// commits. aznhc = github.com/Azure/azurehpc-health-checks, CHS =
// github.com/GoogleCloudPlatform/cluster-health-scanner, NVLink 5 = 900 GB/s per
// direction per GPU (www.nvidia.com/en-us/data-center/nvlink/).
std::vector<Threshold> default_thresholds() {
    return {
        // One node.
        // aznhc conf/nd96isr_h100_v5.conf: check_nccl_allreduce 460.0 (one VM, 16 GiB)
        {"H100", 8, 460},
        // aznhc conf/nd96isr_h200_v5.conf: check_nccl_allreduce 431.0 (one VM, 16 GiB)
        {"H200", 8, 431},
        // derived: 0.75 x NVLink 5 900 GB/s (NVIDIA/nccl#1807: a node measured 830+)
        {"B200", 8, 675},
        // derived: 0.75 x NVLink 5 900 GB/s, as B200 (no public measurement found)
        {"B300", 8, 675},
        // aznhc conf/nd128isr_ndr_gb200_v6.conf @215c644: check_nccl_allreduce 432.0
        {"GB200", 4, 432},
        // derived: 0.48 x NVLink 5 900 GB/s, the fraction aznhc uses for GB200 (432/900)
        {"GB300", 4, 432},
        // aznhc conf/nd96amsr_a100_v4.conf: check_nccl_allreduce 228.0 (one VM, 16 GiB)
        {"A100", 8, 228},
        // 0.85 x 234.74 measured: fixture 04, from eugenesiow/LLM-Insights
        {"A100", 4, 200},
        // 0.84 x 47.49 measured: fixture 02, from eugenesiow/LLM-Insights
        {"A40", 2, 40},
        // Two or more nodes.
        // derived: 0.65 x 8 NICs x 48 GB/s per 400G NIC (NVIDIA/nccl-tests#319)
        {"H100", 8, 250, 2},
        // CHS deploy/helm/health_checks/nccl_healthcheck/a3ultra.yaml: 250, NHOSTS 2
        {"H200", 8, 250, 2},
        // CHS deploy/helm/health_checks/nccl_healthcheck/a4.yaml: 250, NHOSTS 2
        {"B200", 8, 250, 2},
        // derived: 0.65 x 8 NICs x 48 GB/s per 400G NIC (NVIDIA/nccl-tests#319)
        {"B300", 8, 250, 2},
        // CHS deploy/helm/health_checks/nccl_healthcheck/a4x.yaml: 160, NHOSTS 2
        {"GB200", 4, 160, 2},
        // derived: 0.65 x 4 NICs x 48 GB/s per 400G NIC (NVIDIA/nccl-tests#319)
        {"GB300", 4, 125, 2},
        // derived: 0.65 x 8 NICs x 24 GB/s per 200G NIC (NVIDIA/nccl-tests#119)
        {"A100", 8, 125, 2},
    };
}

std::vector<Threshold> merge_thresholds(std::vector<Threshold> base,
                                        const std::vector<Threshold> &overrides) {
    for (const auto &o : overrides) {
        const auto same = [&o](const Threshold &t) {
            return lower(t.model) == lower(o.model) && t.gpus == o.gpus && t.nodes == o.nodes;
        };
        base.erase(std::remove_if(base.begin(), base.end(), same), base.end());
        base.push_back(o);
    }
    return base;
}

std::optional<Threshold> find_threshold(const std::vector<Threshold> &table,
                                        std::string_view gpu_name, unsigned gpus, unsigned nodes) {
    const auto name = lower(gpu_name);
    const auto covers = [nodes](const Threshold &t) {
        return nodes <= 1 ? t.nodes <= 1 : t.nodes >= 2 && t.nodes <= nodes;
    };
    std::optional<Threshold> best;
    for (const auto &t : table) {
        if (t.gpus != gpus || !covers(t) || name.find(lower(t.model)) == std::string::npos) {
            continue;
        }
        if (!best || t.model.size() > best->model.size() ||
            (t.model.size() == best->model.size() && t.nodes > best->nodes)) {
            best = t;
        }
    }
    return best;
}

} // namespace sjh
