// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/digest.hpp"

namespace sjail {

void Digest::add(std::string_view text) noexcept {
    for (const char c : text) {
        hash_ ^= static_cast<unsigned char>(c);
        hash_ *= 0x100000001b3ULL;
    }
}

std::string Digest::hex() const {
    constexpr std::string_view kHex = "0123456789abcdef";
    std::string out = "fnv1a64:";
    for (int shift = 60; shift >= 0; shift -= 4) {
        out += kHex[(hash_ >> shift) & 0xfU];
    }
    return out;
}

} // namespace sjail
