// SPDX-License-Identifier: Apache-2.0
#include "xid.hpp"

#include "text.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <fmt/format.h>
#include <regex>
#include <stdexcept>

namespace sjh {

std::set<unsigned> default_fatal_xids() {
    // Azure HPC health checks' list (azure_gpu_xid.nhc), plus 95 (uncontained
    // ECC error) and 154 (the driver asks for a GPU reset or node reboot).
    return {48, 56, 57, 58, 62, 63, 64, 65, 68, 69, 73, 74, 79, 80, 81, 92, 95, 119, 120, 154};
}

std::set<unsigned> parse_xid_list(std::string_view list) {
    std::set<unsigned> out;
    for (const auto part : split(list, ',')) {
        const auto item = trim(part);
        unsigned v = 0;
        const auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
        if (item.empty() || ec != std::errc{} || p != item.data() + item.size()) {
            throw std::invalid_argument(fmt::format(
                "bad Xid list '{}': '{}' is not a number (write e.g. 48,79,95)", list, item));
        }
        out.insert(v);
    }
    return out;
}

std::optional<XidEvent> parse_xid_record(std::string_view line) {
    static const std::regex kmsg(R"(^\d+,\d+,(\d+),[^;]*;(.*)$)");
    static const std::regex dmesg(R"(^\[\s*(\d+)\.(\d{1,6})\]\s*(.*)$)");
    static const std::regex xid(R"(NVRM: (Xid \(PCI:([0-9A-Fa-f:.]+)\): (\d+),.*)$)");
    const std::string s(line);
    std::smatch m;
    std::uint64_t t = 0;
    std::string msg;
    if (std::regex_match(s, m, kmsg)) {
        t = std::stoull(m.str(1));
        msg = m.str(2);
    } else if (std::regex_match(s, m, dmesg)) {
        std::string frac = m.str(2);
        frac.resize(6, '0');
        t = std::stoull(m.str(1)) * 1000000 + std::stoull(frac);
        msg = m.str(3);
    } else {
        return std::nullopt;
    }
    std::smatch x;
    if (!std::regex_search(msg, x, xid)) {
        return std::nullopt;
    }
    XidEvent e;
    e.time_us = t;
    e.pci = x.str(2);
    e.xid = static_cast<unsigned>(std::stoul(x.str(3)));
    e.text = x.str(1);
    return e;
}

std::vector<XidEvent> parse_xid_log(std::string_view text) {
    std::vector<XidEvent> out;
    for (const auto line : lines(text)) {
        if (auto e = parse_xid_record(line)) {
            out.push_back(std::move(*e));
        }
    }
    return out;
}

std::vector<XidEvent> recent_fatal_xids(const std::vector<XidEvent> &events,
                                        const std::set<unsigned> &fatal, std::uint64_t now_us,
                                        std::uint64_t window_us) {
    const std::uint64_t since = now_us > window_us ? now_us - window_us : 0;
    std::vector<XidEvent> out;
    std::copy_if(events.begin(), events.end(), std::back_inserter(out),
                 [&](const XidEvent &e) { return e.time_us >= since && fatal.contains(e.xid); });
    return out;
}

namespace {

// -> {domain, bus, device} as numbers; nullopt when unparsable.
std::optional<std::array<unsigned long, 3>> pci_parts(std::string_view s) {
    static const std::regex re(
        R"(^([0-9A-Fa-f]+):([0-9A-Fa-f]+):([0-9A-Fa-f]+)(\.[0-9A-Fa-f]+)?$)");
    const std::string str(s);
    std::smatch m;
    if (!std::regex_match(str, m, re)) {
        return std::nullopt;
    }
    return std::array<unsigned long, 3>{std::stoul(m.str(1), nullptr, 16),
                                        std::stoul(m.str(2), nullptr, 16),
                                        std::stoul(m.str(3), nullptr, 16)};
}

} // namespace

bool same_pci_device(std::string_view nvml_bus_id, std::string_view xid_pci) {
    const auto a = pci_parts(nvml_bus_id);
    const auto b = pci_parts(xid_pci);
    return a && b && *a == *b;
}

} // namespace sjh
