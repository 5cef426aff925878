// SPDX-License-Identifier: Apache-2.0
// Bus-bandwidth thresholds for the NCCL check: the built-in table, the
// MODELxGPUS[xNODES]=GBPS override syntax, merging and lookup (pure).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sjh {

// Minimum bus bandwidth (GB/s) at the largest message size for a GPU model,
// GPUs per node and number of nodes, written "H100x8=460" (one node) or
// "H100x8x2=250" (across two or more nodes).
struct Threshold {
    std::string model; // matched case-insensitively as a substring of the GPU name
    unsigned gpus = 0; // per node
    double min_busbw = 0;
    unsigned nodes = 1;
    // "H100x8" or "H100x8x2": what the threshold is for.
    std::string key() const;
    // "H100x8=460" or "H100x8x2=250": parse_threshold reads it back.
    std::string spec() const;
};

// Parses "MODELxGPUS=GBPS" or "MODELxGPUSxNODES=GBPS". Throws
// std::invalid_argument naming the problem and the syntax.
Threshold parse_threshold(std::string_view spec);

// The built-in table; health/docs/nccl-thresholds.md gives each number's source.
std::vector<Threshold> default_thresholds();

// Later entries with the same model, GPU count and node count replace earlier ones.
std::vector<Threshold> merge_thresholds(std::vector<Threshold> base,
                                        const std::vector<Threshold> &overrides);

// The entry for this GPU name, GPUs per node and node count. The longest
// matching model wins ("A100-SXM4-80GB" beats "A100"). One node takes only
// one-node entries. N >= 2 nodes take the multi-node entry with the largest
// node count that is <= N: an entry for 2 nodes covers 2, 3, 4, ... nodes until
// an entry for more nodes exists.
std::optional<Threshold> find_threshold(const std::vector<Threshold> &table,
                                        std::string_view gpu_name, unsigned gpus,
                                        unsigned nodes = 1);

} // namespace sjh
