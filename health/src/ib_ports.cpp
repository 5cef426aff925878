// SPDX-License-Identifier: Apache-2.0
#include "ib_ports.hpp"

#include "text.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fmt/format.h>
#include <stdexcept>

namespace sjh {
namespace {

bool is_hca_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.';
}

bool is_decimal(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c)) != 0;
    });
}

// "mlx5_0/1": an HCA name as the kernel gives them and a port number 1..255.
bool is_port_name(std::string_view entry) {
    const auto slash = entry.find('/');
    if (slash == std::string_view::npos) {
        return false;
    }
    const auto hca = entry.substr(0, slash);
    const auto port = entry.substr(slash + 1);
    if (hca.empty() || hca == "." || hca == ".." ||
        !std::all_of(hca.begin(), hca.end(), is_hca_char) || !is_decimal(port) || port.size() > 3) {
        return false;
    }
    const int number = std::stoi(std::string(port));
    return number >= 1 && number <= 255;
}

// The leading decimal number of `text` and what follows it.
std::optional<double> leading_number(std::string_view text, std::string_view &rest) {
    double value = 0;
    const auto *end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value, std::chars_format::fixed);
    if (ec != std::errc() || ptr == text.data()) {
        return std::nullopt;
    }
    rest = trim(std::string_view(ptr, static_cast<std::size_t>(end - ptr)));
    return value;
}

} // namespace

bool port_is_up(const IbPortReading &port) {
    return port_state_name(port.state) == "ACTIVE" && port_state_name(port.phys_state) == "LinkUp";
}

std::string_view port_state_name(std::string_view sysfs_state) {
    const auto s = trim(sysfs_state);
    const auto colon = s.find(':');
    if (colon != std::string_view::npos && is_decimal(trim(s.substr(0, colon)))) {
        return trim(s.substr(colon + 1));
    }
    return s;
}

std::optional<double> parse_ib_rate(std::string_view sysfs_rate) {
    std::string_view rest;
    const auto value = leading_number(trim(sysfs_rate), rest);
    if (!value || !rest.starts_with("Gb/sec")) {
        return std::nullopt;
    }
    return value;
}

std::vector<std::string> parse_ib_port_list(std::string_view text) {
    std::vector<std::string> ports;
    for (const auto raw : split(text, ',')) {
        const auto entry = trim(raw);
        if (!is_port_name(entry)) {
            throw std::invalid_argument(
                fmt::format("--ib-ports entry '{}' is not HCA/PORT: write the HCA as named under "
                            "/sys/class/infiniband and its port number, comma-separated, e.g. "
                            "--ib-ports mlx5_0/1,mlx5_1/1",
                            entry));
        }
        if (std::find(ports.begin(), ports.end(), entry) == ports.end()) {
            ports.emplace_back(entry);
        }
    }
    return ports;
}

double parse_ib_min_rate(std::string_view text) {
    std::string_view rest;
    const auto value = leading_number(trim(text), rest);
    if (!value || *value <= 0 || !(rest.empty() || rest == "Gb/s" || rest == "Gb/sec")) {
        throw std::invalid_argument(fmt::format(
            "--ib-min-rate '{}' is not a rate in Gb/s: give the number the ports' sysfs rate "
            "file starts with, e.g. 400 for NDR, 200 for HDR, 100 for EDR",
            text));
    }
    return *value;
}

} // namespace sjh
