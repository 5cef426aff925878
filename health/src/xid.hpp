// SPDX-License-Identifier: Apache-2.0
// Xid events from the kernel log (pure parsing and filtering).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace sjh {

struct XidEvent {
    std::uint64_t time_us = 0; // since boot (kernel log clock)
    std::string pci;           // as printed: "0000:1b:00"
    unsigned xid = 0;
    std::string text; // the message after "NVRM: "
};

// The Xids that drain a node. See health/README.md for the reasoning.
std::set<unsigned> default_fatal_xids();

// Parses "48,63,79" (spaces allowed). Throws std::invalid_argument.
std::set<unsigned> parse_xid_list(std::string_view list);

// One record, either /dev/kmsg form "6,1234,5678901,-;NVRM: Xid (PCI:0000:1b:00): 79, ..."
// or dmesg form "[  123.456789] NVRM: Xid (PCI:0000:1b:00): 79, ...".
std::optional<XidEvent> parse_xid_record(std::string_view line);

// Every Xid in a log text, one record per line.
std::vector<XidEvent> parse_xid_log(std::string_view text);

// Events at or after now - window, whose Xid is in the fatal set.
std::vector<XidEvent> recent_fatal_xids(const std::vector<XidEvent> &events,
                                        const std::set<unsigned> &fatal, std::uint64_t now_us,
                                        std::uint64_t window_us);

// "00000000:1B:00.0" (NVML) and "0000:1b:00" (Xid line) name the same device.
bool same_pci_device(std::string_view nvml_bus_id, std::string_view xid_pci);

} // namespace sjh
