// SPDX-License-Identifier: Apache-2.0
#include "fake_nvml_capture.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

namespace fake_nvml {
namespace {

std::string trim(const std::string &s) {
    const auto a = s.find_first_not_of(' ');
    const auto b = s.find_last_not_of(" \r");
    return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}

std::vector<std::string> split_csv(const std::string &line) {
    std::vector<std::string> out;
    std::stringstream ss(line);
    std::string item;
    while (std::getline(ss, item, ',')) {
        out.push_back(trim(item));
    }
    return out;
}

// `nvidia-smi -q` item (path below the GPU's section) -> the CSV field name.
const std::map<std::string, std::string> &query_fields() {
    static const std::map<std::string, std::string> m = {
        {"Product Name", "name"},
        {"Serial Number", "serial"},
        {"PCI/Bus Id", "pci.bus_id"},
        {"PCI/GPU Link Info/PCIe Generation/Device Current", "pcie.link.gen.gpucurrent"},
        {"PCI/GPU Link Info/PCIe Generation/Max", "pcie.link.gen.max"},
        {"PCI/GPU Link Info/Link Width/Current", "pcie.link.width.current"},
        {"PCI/GPU Link Info/Link Width/Max", "pcie.link.width.max"},
        {"Retired Pages/Pending Page Blacklist", "retired_pages.pending"},
        {"Remapped Rows/Correctable Error", "remapped_rows.correctable"},
        {"Remapped Rows/Uncorrectable Error", "remapped_rows.uncorrectable"},
        {"Remapped Rows/Pending", "remapped_rows.pending"},
        {"Remapped Rows/Remapping Failure Occurred", "remapped_rows.failure"},
        {"Temperature/GPU Current Temp", "temperature.gpu"},
    };
    return m;
}

// "Clocks Event Reasons" items -> nvmlClocksEventReason bits.
std::uint64_t event_reason_bit(const std::string &item) {
    static const std::map<std::string, std::uint64_t> m = {
        {"Idle", 0x1},
        {"Applications Clocks Setting", 0x2},
        {"SW Power Cap", 0x4},
        {"HW Slowdown", 0x8},
        {"Sync Boost", 0x10},
        {"SW Thermal Slowdown", 0x20},
        {"HW Slowdown/HW Thermal Slowdown", 0x40},
        {"HW Slowdown/HW Power Brake Slowdown", 0x80},
        {"Display Clock Setting", 0x100},
    };
    const auto it = m.find(item);
    return it == m.end() ? 0 : it->second;
}

// Walks the indented "Key : Value" lines of the first GPU's section, calling
// on_item(path, value) with the path of section names below the GPU ("PCI/Bus Id").
template <typename F> unsigned walk_query(std::istream &in, F &&on_item) {
    std::vector<std::string> sections;
    unsigned attached = 0;
    bool in_gpu = false;
    std::string line;
    while (std::getline(in, line)) {
        const auto text = trim(line);
        if (text.empty()) {
            continue;
        }
        const auto level = line.find_first_not_of(' ') / 4;
        const auto sep = text.find(" : ");
        std::string key = trim(sep == std::string::npos ? text : text.substr(0, sep));
        const std::string value = sep == std::string::npos ? "" : trim(text.substr(sep + 3));
        if (level == 0) {
            if (in_gpu && key.starts_with("GPU ")) {
                break; // only the first GPU's values
            }
            in_gpu = key.starts_with("GPU ");
            if (key == "Attached GPUs") {
                attached = static_cast<unsigned>(std::strtoul(value.c_str(), nullptr, 10));
            }
            sections.clear();
            continue;
        }
        if (!in_gpu) {
            continue;
        }
        // A line opens a section for the deeper lines after it, with or
        // without a value of its own ("HW Slowdown : Not Active").
        sections.resize(level - 1);
        std::string path;
        for (const auto &s : sections) {
            path += s + "/";
        }
        sections.push_back(key);
        if (sep != std::string::npos) {
            on_item(path + key, value);
        }
    }
    return attached;
}

unsigned hex_at(const std::string &s, std::size_t pos) {
    return static_cast<unsigned>(std::strtoul(s.substr(pos, 2).c_str(), nullptr, 16));
}

} // namespace

std::optional<Capture> load_query_gpu_csv(const std::string &path) {
    std::ifstream in(path);
    std::string line;
    std::vector<std::string> header;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') {
            continue; // the capture's banner
        }
        if (header.empty()) {
            header = split_csv(line);
            continue;
        }
        Capture c;
        const auto values = split_csv(line);
        for (std::size_t i = 0; i < header.size() && i < values.size(); ++i) {
            c.fields[header[i]] = values[i];
        }
        c.gpus = 8;
        c.nvlinks = 18;
        c.bus = 0x18;
        return c;
    }
    return std::nullopt;
}

std::optional<Capture> load_nvidia_smi_q(const std::string &path) {
    std::ifstream in(path);
    if (!in) {
        return std::nullopt;
    }
    Capture c;
    std::uint64_t reasons = 0;
    std::uint64_t ecc_uncorrected = 0;
    c.gpus = walk_query(in, [&](const std::string &item, const std::string &value) {
        if (const auto it = query_fields().find(item); it != query_fields().end()) {
            c.fields[it->second] = value == "N/A" ? "[N/A]" : value;
        } else if (item.starts_with("Clocks Event Reasons/") && value == "Active") {
            reasons |= event_reason_bit(item.substr(21));
        } else if (item.starts_with("ECC Errors/Volatile/") &&
                   item.find("Uncorrectable") != std::string::npos) {
            ecc_uncorrected += std::strtoull(value.c_str(), nullptr, 10);
        }
    });
    if (c.gpus == 0 || !c.fields.contains("name") || !c.fields.contains("pci.bus_id")) {
        return std::nullopt;
    }
    char hex[32];
    std::snprintf(hex, sizeof hex, "0x%016llX", static_cast<unsigned long long>(reasons));
    c.fields["clocks_event_reasons.active"] = hex;
    c.fields["ecc.errors.uncorrected.volatile.total"] = std::to_string(ecc_uncorrected);
    const auto &bus_id = c.fields["pci.bus_id"]; // "00000000:00:06.0"
    c.bus = hex_at(bus_id, 9);
    c.device = hex_at(bus_id, 12);
    return c;
}

} // namespace fake_nvml
