// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/gpu_mode.hpp"

namespace sjail {

std::optional<GpuMode> parse_gpu_mode(std::string_view text) {
    if (text == "off") {
        return GpuMode::Off;
    }
    if (text == "auto") {
        return GpuMode::Auto;
    }
    if (text == "on") {
        return GpuMode::On;
    }
    return std::nullopt;
}

std::string_view gpu_mode_name(GpuMode mode) {
    switch (mode) {
    case GpuMode::Off:
        return "off";
    case GpuMode::Auto:
        return "auto";
    case GpuMode::On:
        return "on";
    }
    return "auto";
}

} // namespace sjail
