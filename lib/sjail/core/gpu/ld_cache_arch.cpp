// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/gpu/ld_cache_arch.hpp"

#include <algorithm>
#include <array>
#include <utility>
#include <vector>

namespace sjail {
namespace {

constexpr std::int32_t kTypeMask = 0x00ff;
constexpr std::int32_t kAbiMask = 0xff00;

// glibc's ABI flags of libc6 entries, with ldconfig's and Debian's names.
constexpr std::array<std::pair<std::int32_t, std::string_view>, 9> kAbiNames = {{
    {0x0000, "i386"}, // 32-bit x86 (and other 32-bit ABIs without a flag of their own)
    {0x0300, "x86-64"},
    {0x0400, "s390x"},
    {0x0500, "ppc64"},
    {0x0800, "x32"},
    {0x0900, "armhf"},
    {0x0a00, "aarch64"},
    {0x0b00, "armel"},
    {0x1000, "riscv64"},
}};

std::string hex4(std::int32_t v) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string s = "0x0000";
    for (std::size_t i = 0; i < 4; ++i) {
        s[5 - i] = digits[(static_cast<unsigned>(v) >> (4 * i)) & 0xfU];
    }
    return s;
}

std::string joined(const std::vector<std::string> &names) {
    std::string out;
    for (std::size_t i = 0; i < names.size(); ++i) {
        out += i == 0 ? "" : (i + 1 == names.size() ? " and " : ", ");
        out += names[i];
    }
    return out;
}

} // namespace

std::string ld_cache_flags_arch(std::int32_t flags) {
    for (const Arch *arch : {&kArchX8664, &kArchAarch64}) {
        if (flags == arch->ld_cache_flags) {
            return std::string(arch->name);
        }
    }
    if ((flags & kTypeMask) == kLdCacheElfLibc6) {
        for (const auto &[abi, name] : kAbiNames) {
            if ((flags & kAbiMask) == abi) {
                return std::string(name);
            }
        }
    }
    return "flags " + hex4(flags);
}

Status check_ld_cache_arch(const LdCache &cache, const Arch &arch, std::string_view shown) {
    std::vector<std::string> others;
    for (const auto &e : cache.entries) {
        if (e.flags == arch.ld_cache_flags) {
            return {};
        }
        std::string name = ld_cache_flags_arch(e.flags);
        if (std::find(others.begin(), others.end(), name) == others.end()) {
            others.push_back(std::move(name));
        }
    }
    if (others.empty()) {
        return {};
    }
    std::sort(others.begin(), others.end());
    return Status::failure("the loader cache " + std::string(shown) + " holds only " +
                           joined(others) + " entries; this node is " + std::string(arch.name) +
                           ", so its loader takes none of them (ldconfig wrote it over another "
                           "architecture's libraries)");
}

} // namespace sjail
