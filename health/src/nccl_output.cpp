// SPDX-License-Identifier: Apache-2.0
#include "nccl_output.hpp"

#include "text.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <fmt/format.h>
#include <regex>

namespace sjh {
namespace {

std::vector<std::string_view> split_ws(std::string_view s) {
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) {
            ++i;
        }
        const std::size_t start = i;
        while (i < s.size() && s[i] != ' ' && s[i] != '\t') {
            ++i;
        }
        if (i > start) {
            out.push_back(s.substr(start, i - start));
        }
    }
    return out;
}

std::optional<std::uint64_t> to_u64(std::string_view s) {
    std::uint64_t v = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || p != s.data() + s.size()) {
        return std::nullopt;
    }
    return v;
}

std::optional<double> to_double(std::string_view s) {
    double v = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || p != s.data() + s.size()) {
        return std::nullopt;
    }
    return v;
}

// "#wrong": a number, N/A, or exponent form. nullopt + ok=false means garbage.
bool parse_wrong(std::string_view s, std::optional<double> &out) {
    if (s == "N/A") {
        out.reset();
        return true;
    }
    out = to_double(s);
    return out.has_value();
}

// size count type redop root | time algbw busbw #wrong | time algbw busbw #wrong
std::optional<NcclRow> parse_row(std::string_view line) {
    const auto t = split_ws(line);
    if (t.size() != 13) {
        return std::nullopt;
    }
    NcclRow r;
    const auto size = to_u64(t[0]);
    const auto count = to_u64(t[1]);
    if (!size || !count) {
        return std::nullopt;
    }
    r.size_bytes = *size;
    r.count = *count;
    r.type = std::string(t[2]);
    r.redop = std::string(t[3]);
    const auto ot = to_double(t[5]);
    const auto oa = to_double(t[6]);
    const auto ob = to_double(t[7]);
    const auto it = to_double(t[9]);
    const auto ia = to_double(t[10]);
    const auto ib = to_double(t[11]);
    if (!ot || !oa || !ob || !it || !ia || !ib) {
        return std::nullopt;
    }
    if (!parse_wrong(t[8], r.oop_wrong) || !parse_wrong(t[12], r.ip_wrong)) {
        return std::nullopt;
    }
    r.oop_time_us = *ot;
    r.oop_algbw = *oa;
    r.oop_busbw = *ob;
    r.ip_time_us = *it;
    r.ip_algbw = *ia;
    r.ip_busbw = *ib;
    return r;
}

void parse_comment(std::string_view body, NcclOutput &out) {
    static const std::regex oob(R"(^#\s*Out of bounds values\s*:\s*(\d+)\s+(OK|FAILED))");
    static const std::regex avg(R"(^#\s*Avg bus bandwidth\s*:\s*([0-9.eE+-]+))");
    static const std::regex ver(R"(^#\s*nccl-tests version\s+(\S+))");
    const std::string s(body);
    std::smatch m;
    if (std::regex_search(s, m, oob)) {
        out.out_of_bounds = to_u64(m.str(1));
        out.out_of_bounds_ok = m.str(2) == "OK";
    } else if (std::regex_search(s, m, avg)) {
        out.avg_busbw = to_double(m.str(1));
    } else if (std::regex_search(s, m, ver)) {
        out.version = m.str(1);
    }
}

bool is_failure_line(std::string_view body) {
    return body.find("NCCL failure") != std::string_view::npos ||
           body.find("CUDA failure") != std::string_view::npos;
}

} // namespace

std::pair<std::string_view, std::string_view> strip_mpirun_tag(std::string_view line) {
    // "[1,0]<stdout>:" — job,rank in brackets, stream in angle brackets.
    if (line.empty() || line.front() != '[') {
        return {line, ""};
    }
    const auto close = line.find("]<");
    if (close == std::string_view::npos) {
        return {line, ""};
    }
    const auto ids = line.substr(1, close - 1);
    if (ids.empty() || ids.find_first_not_of("0123456789,") != std::string_view::npos) {
        return {line, ""};
    }
    const auto end = line.find(">:", close);
    if (end == std::string_view::npos) {
        return {line, ""};
    }
    return {line.substr(end + 2), line.substr(close + 2, end - close - 2)};
}

NcclOutput parse_nccl_output(std::string_view text) {
    NcclOutput out;
    for (const auto line : lines(text)) {
        const auto [rest, stream] = strip_mpirun_tag(line);
        const auto body = trim(rest);
        if (body.empty()) {
            continue;
        }
        if (is_failure_line(body)) {
            out.failures.emplace_back(body);
        } else if (stream == "stderr") {
            continue; // noise from other ranks' stderr
        } else if (body.front() == '#') {
            parse_comment(body, out);
        } else if (auto row = parse_row(body)) {
            out.rows.push_back(std::move(*row));
        }
    }
    return out;
}

std::vector<NcclRow> largest_size_rows(const NcclOutput &out) {
    std::uint64_t largest = 0;
    for (const auto &r : out.rows) {
        largest = std::max(largest, r.size_bytes);
    }
    std::vector<NcclRow> rows;
    std::copy_if(out.rows.begin(), out.rows.end(), std::back_inserter(rows),
                 [largest](const NcclRow &r) { return r.size_bytes == largest; });
    return rows;
}

std::optional<double> busbw_at_largest_size(const NcclOutput &out) {
    std::optional<double> best;
    for (const auto &r : largest_size_rows(out)) {
        const double v = std::max(r.oop_busbw, r.ip_busbw);
        if (!best || v > *best) {
            best = v;
        }
    }
    return best;
}

double total_wrong(const NcclOutput &out) {
    double sum = 0;
    for (const auto &r : out.rows) {
        sum += r.oop_wrong.value_or(0) + r.ip_wrong.value_or(0);
    }
    return sum;
}

std::string human_size(std::uint64_t bytes) {
    constexpr std::uint64_t kib = 1024;
    const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    std::size_t u = 0;
    std::uint64_t v = bytes;
    while (u + 1 < std::size(units) && v >= kib && v % kib == 0) {
        v /= kib;
        ++u;
    }
    return fmt::format("{} {}", v, units[u]);
}

} // namespace sjh
