// SPDX-License-Identifier: Apache-2.0
// The gpu= setting: whether the plugin binds the node's NVIDIA driver into
// the jail view. Pure.
#pragma once

#include <optional>
#include <string_view>

namespace sjail {

enum class GpuMode {
    Off,  // never look
    Auto, // bind the driver when the node has one; a node without one is fine
    On,   // the node must have a driver; not finding one is an error
};

// "off", "auto", "on" -> the mode; anything else -> nothing.
std::optional<GpuMode> parse_gpu_mode(std::string_view text);
std::string_view gpu_mode_name(GpuMode mode);

// Where gpu= on or auto binds the node's driver tree in the jail (an empty,
// root-owned directory there); an admin's bind may not land below it.
inline constexpr std::string_view kDriverViewDir = "/usr/local/nvidia";

} // namespace sjail
