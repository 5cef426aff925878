// SPDX-License-Identifier: Apache-2.0
// A short, stable digest of text: 64-bit FNV-1a, shown as "fnv1a64:" and 16
// hex digits. For telling apart texts the plugin itself writes (a stamp, the
// settings), never text a user chooses. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sjail {

class Digest {
  public:
    void add(std::string_view text) noexcept;
    [[nodiscard]] std::string hex() const;

  private:
    std::uint64_t hash_ = 0xcbf29ce484222325ULL;
};

} // namespace sjail
