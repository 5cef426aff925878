// SPDX-License-Identifier: Apache-2.0
#include "ib_sysfs.hpp"

#include "text.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace sjh {
namespace {

namespace fs = std::filesystem;

// The file's text without surrounding blanks; empty when it cannot be read.
std::string read_trimmed(const fs::path &path) {
    std::ifstream in(path);
    if (!in) {
        return {};
    }
    std::stringstream ss;
    ss << in.rdbuf();
    return std::string(trim(ss.str()));
}

std::optional<std::uint64_t> read_counter(const fs::path &path) {
    const auto text = read_trimmed(path);
    std::uint64_t value = 0;
    const auto *end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (text.empty() || ec != std::errc() || ptr != end) {
        return std::nullopt;
    }
    return value;
}

// The entries of `dir`, sorted by name (or by number when all are numbers).
std::vector<fs::path> sorted_entries(const fs::path &dir, bool numeric) {
    std::error_code ec;
    std::vector<fs::path> entries;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        entries.push_back(it->path());
    }
    if (ec) {
        throw std::runtime_error(fmt::format("cannot list '{}': {}", dir.string(), ec.message()));
    }
    const auto number = [](const fs::path &p) {
        unsigned n = 0;
        const auto name = p.filename().string();
        (void)std::from_chars(name.data(), name.data() + name.size(), n);
        return n;
    };
    std::sort(entries.begin(), entries.end(), [&](const fs::path &a, const fs::path &b) {
        return numeric ? number(a) < number(b) : a.filename() < b.filename();
    });
    return entries;
}

IbPortReading read_port(const fs::path &port_dir, const std::string &hca) {
    IbPortReading p;
    p.name = fmt::format("{}/{}", hca, port_dir.filename().string());
    p.state = read_trimmed(port_dir / "state");
    p.phys_state = read_trimmed(port_dir / "phys_state");
    p.rate = read_trimmed(port_dir / "rate");
    p.link_layer = read_trimmed(port_dir / "link_layer");
    p.link_downed = read_counter(port_dir / "counters" / "link_downed");
    p.symbol_error = read_counter(port_dir / "counters" / "symbol_error");
    return p;
}

} // namespace

std::vector<IbPortReading> read_ib_ports(const std::string &sysfs_root) {
    const auto class_dir = fs::path(sysfs_root) / "class" / "infiniband";
    std::error_code ec;
    if (!fs::is_directory(class_dir, ec)) {
        return {};
    }
    std::vector<IbPortReading> ports;
    for (const auto &hca : sorted_entries(class_dir, false)) {
        const auto ports_dir = hca / "ports";
        if (!fs::is_directory(ports_dir, ec)) {
            continue;
        }
        for (const auto &port : sorted_entries(ports_dir, true)) {
            ports.push_back(read_port(port, hca.filename().string()));
        }
    }
    return ports;
}

} // namespace sjh
