// SPDX-License-Identifier: Apache-2.0
// The settings of chroot.so's plugstack.conf line, one row each. Parsing, the
// repeat check, the hint that names them, the fingerprint of what shapes the
// node's view and the test of the docs' tables all follow this table. Pure.
#pragma once

#include "sjail/core/status.hpp"

#include <span>
#include <string>
#include <string_view>

namespace sjail {

struct Config;

// Receives a setting's value for the fingerprint, a piece at a time.
class PieceSink {
  public:
    virtual void add(std::string_view piece) = 0;

  protected:
    PieceSink() = default;
    PieceSink(const PieceSink &) = default;
    PieceSink &operator=(const PieceSink &) = default;
    ~PieceSink() = default;
};

struct Setting {
    std::string_view name; // the key, before '='
    // The default as it is written (key=DEFAULT gives the same Config as
    // leaving the key out); empty where there is none to write: required,
    // none, or the kernel's or the node's own.
    std::string_view default_value;
    bool repeatable; // given any number of times (bind=)
    // Checks the value and stores it (appends it, when repeatable); `key`
    // is the row's name, for messages.
    Status (*apply)(Config &config, std::string_view key, const std::string &value);
    // The value for the fingerprint; nullptr for a setting that does not
    // shape the node's view.
    void (*show)(const Config &config, PieceSink &sink);

    // In the fingerprint: a change rebuilds the node's namespace.
    [[nodiscard]] bool shapes_view() const { return show != nullptr; }
};

// Every setting, in the order of the README's settings table (chroot.so(8)
// groups them otherwise: run= after munge=, allow_opt_out= after recheck=).
std::span<const Setting> settings();

// The row of `name`, or nullptr when there is no such setting.
const Setting *find_setting(std::string_view name);

// The highest number of seconds build_timeout= and recheck= take.
inline constexpr int kMaxSettingSeconds = 3600;

} // namespace sjail
