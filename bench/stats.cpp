// SPDX-License-Identifier: Apache-2.0
#include "stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace bench {

Summary summarize(std::vector<std::int64_t> samples_ns) {
    Summary s;
    s.n = samples_ns.size();
    if (s.n == 0) {
        return s;
    }
    std::sort(samples_ns.begin(), samples_ns.end());
    const auto us = [](std::int64_t ns) { return static_cast<double>(ns) / 1000.0; };
    const std::size_t mid = s.n / 2;
    s.median_us =
        s.n % 2 == 1 ? us(samples_ns[mid]) : (us(samples_ns[mid - 1]) + us(samples_ns[mid])) / 2.0;
    const auto rank = static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(s.n)));
    s.p99_us = us(samples_ns[std::max<std::size_t>(rank, 1) - 1]);
    const double total =
        std::accumulate(samples_ns.begin(), samples_ns.end(), 0.0,
                        [](double acc, std::int64_t v) { return acc + static_cast<double>(v); });
    s.mean_us = total / static_cast<double>(s.n) / 1000.0;
    s.min_us = us(samples_ns.front());
    s.max_us = us(samples_ns.back());
    return s;
}

} // namespace bench
