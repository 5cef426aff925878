// SPDX-License-Identifier: Apache-2.0
// Order statistics of benchmark samples (nanoseconds in, microseconds out).
#pragma once

#include <cstdint>
#include <vector>

namespace bench {

struct Summary {
    std::size_t n = 0;
    double median_us = 0;
    double p99_us = 0;
    double mean_us = 0;
    double min_us = 0;
    double max_us = 0;
};

// Median (mean of the two middle values for even n) and p99 by nearest rank
// (the smallest sample with at least 99% of the samples at or below it).
Summary summarize(std::vector<std::int64_t> samples_ns);

} // namespace bench
