// SPDX-License-Identifier: Apache-2.0
// Reading glibc's loader cache, /etc/ld.so.cache. Pure: bytes in, entries out.
//
// Only the format that glibc 2.32 and later write by default is accepted
// ("glibc-ld.so.cache" version "1.1", little-endian, as Debian 12's ldconfig
// writes it). The old libc5 format and the "compat" format that wraps the new
// one in it are refused: the dynamic loader of every supported distribution
// reads the new format, and ldconfig writes it unless told `-c old|compat`.
#pragma once

#include "sjail/core/arch.hpp"
#include "sjail/core/status.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sjail {

struct LdCacheEntry {
    std::string name;       // what the loader looks up, e.g. "libcuda.so.1"
    std::string path;       // the file it opens, e.g. "/usr/lib/x86_64-linux-gnu/libcuda.so.1"
    std::int32_t flags = 0; // glibc's: library type and ABI (sjail/core/arch.hpp)
    std::uint64_t hwcap = 0;
    std::string hwcaps_subdir; // "x86-64-v3" for glibc-hwcaps entries, else empty

    bool operator==(const LdCacheEntry &) const = default;
};

struct LdCache {
    std::vector<LdCacheEntry> entries; // in file order; the loader takes the first match
    std::string generator;             // e.g. "ldconfig (Debian GLIBC 2.36-9+deb12u14) ..."
};

// Parses a whole cache file. Any truncation, offset outside the file or
// string without its terminating NUL is an error naming what is wrong;
// nothing is read outside `bytes`.
Status parse_ld_cache(std::string_view bytes, LdCache &out);

// The entry the loader of `arch` resolves `name` to: the first plain (not
// glibc-hwcaps) entry with that architecture's flags. Null when there is none.
const LdCacheEntry *find_ld_cache_entry(const LdCache &cache, std::string_view name,
                                        const Arch &arch);

} // namespace sjail
