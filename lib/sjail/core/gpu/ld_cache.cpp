// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/gpu/ld_cache.hpp"

#include <cstddef>

namespace sjail {
namespace {

// Layout of the "glibc-ld.so.cache1.1" file (glibc's struct cache_file_new).
constexpr std::string_view kMagic = "glibc-ld.so.cache";
constexpr std::string_view kVersion = "1.1";
constexpr std::string_view kOldMagic = "ld.so-1.7.0"; // libc5 and "compat" caches
constexpr std::size_t kHeaderSize = 48;
constexpr std::size_t kNlibsAt = 20;
constexpr std::size_t kStringsLenAt = 24;
constexpr std::size_t kFlagsAt = 28;
constexpr std::size_t kExtensionAt = 32;
constexpr std::size_t kEntrySize = 24; // flags, key, value, osversion, hwcap (u64)
constexpr std::uint8_t kEndianMask = 3;
constexpr std::uint8_t kEndianUnset = 0; // written by glibc before 2.33
constexpr std::uint8_t kEndianLittle = 2;

// The extension directory (glibc's struct cache_extension).
constexpr std::uint32_t kExtensionMagic = 0xEAA42174U;
constexpr std::size_t kSectionSize = 16; // tag, flags, offset, size
constexpr std::uint32_t kTagGenerator = 0;
constexpr std::uint32_t kTagHwcaps = 1;
constexpr std::uint64_t kHwcapExtension = 1ULL << 62; // low 32 bits index the hwcaps section

std::uint32_t read_u32(std::string_view b, std::size_t at) {
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < 4; ++i) {
        v |= static_cast<std::uint32_t>(static_cast<unsigned char>(b[at + i])) << (8 * i);
    }
    return v;
}

std::uint64_t read_u64(std::string_view b, std::size_t at) {
    return static_cast<std::uint64_t>(read_u32(b, at)) |
           (static_cast<std::uint64_t>(read_u32(b, at + 4)) << 32);
}

std::string hex(std::uint64_t v) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string s;
    do {
        s.insert(s.begin(), digits[v & 0xfU]);
        v >>= 4;
    } while (v != 0);
    return "0x" + s;
}

// A NUL-terminated string that starts at `at` and ends before `end`.
Status string_at(std::string_view b, std::uint64_t at, std::size_t begin, std::size_t end,
                 const std::string &what, std::string &out) {
    if (at < begin || at >= end) {
        return Status::failure(what + " points at offset " + std::to_string(at) +
                               ", outside the string table [" + std::to_string(begin) + ", " +
                               std::to_string(end) + ")");
    }
    const std::size_t start = static_cast<std::size_t>(at);
    const std::size_t nul = b.substr(0, end).find('\0', start);
    if (nul == std::string_view::npos) {
        return Status::failure(what + " at offset " + std::to_string(at) +
                               " runs past the end of the string table");
    }
    out.assign(b.substr(start, nul - start));
    return {};
}

Status check_header(std::string_view b) {
    if (b.substr(0, kOldMagic.size()) == kOldMagic) {
        return Status::failure("it is in the old libc5 or \"compat\" format, which is not "
                               "supported; regenerate it with ldconfig -c new");
    }
    if (b.size() < kMagic.size() + kVersion.size() || b.substr(0, kMagic.size()) != kMagic) {
        return Status::failure("it is not a glibc ld.so.cache (no \"glibc-ld.so.cache\" magic)");
    }
    const std::string_view version = b.substr(kMagic.size(), kVersion.size());
    if (version != kVersion) {
        return Status::failure("its format version \"" + std::string(version) +
                               "\" is not supported; only 1.1 (glibc 2.32 and later) is");
    }
    if (b.size() < kHeaderSize) {
        return Status::failure("it is truncated: " + std::to_string(b.size()) +
                               " bytes, shorter than its 48-byte header");
    }
    const auto endian =
        static_cast<std::uint8_t>(static_cast<unsigned char>(b[kFlagsAt]) & kEndianMask);
    if (endian != kEndianUnset && endian != kEndianLittle) {
        return Status::failure("it was written for a big-endian or unknown byte order "
                               "(flags " +
                               hex(endian) + "); regenerate it on this node");
    }
    return {};
}

struct Sections {
    std::vector<std::string> hwcaps; // subdirectory names, by index
    std::string generator;
};

Status parse_sections(std::string_view b, std::size_t strings_begin, std::size_t strings_end,
                      Sections &out) {
    const std::uint64_t dir = read_u32(b, kExtensionAt);
    if (dir == 0) {
        return {};
    }
    if (dir % 4 != 0 || dir < strings_end || dir + 8 > b.size()) {
        return Status::failure("its extension directory offset " + std::to_string(dir) +
                               " is misaligned or outside the file");
    }
    const auto at = static_cast<std::size_t>(dir);
    if (read_u32(b, at) != kExtensionMagic) {
        return Status::failure("its extension directory at offset " + std::to_string(dir) +
                               " has a bad magic number");
    }
    const std::uint64_t count = read_u32(b, at + 4);
    if (at + 8 + count * kSectionSize > b.size()) {
        return Status::failure("it is truncated: its extension directory lists " +
                               std::to_string(count) + " sections that do not fit in the file");
    }
    for (std::size_t i = 0; i < count; ++i) {
        const std::size_t s = at + 8 + i * kSectionSize;
        const std::uint32_t tag = read_u32(b, s);
        const std::uint64_t offset = read_u32(b, s + 8);
        const std::uint64_t size = read_u32(b, s + 12);
        if (offset + size > b.size()) {
            return Status::failure("it is truncated: extension section " + std::to_string(i) +
                                   " ends at " + std::to_string(offset + size) +
                                   ", past the end of the file");
        }
        const auto off = static_cast<std::size_t>(offset);
        const auto len = static_cast<std::size_t>(size);
        if (tag == kTagGenerator) {
            out.generator.assign(b.substr(off, len));
        } else if (tag == kTagHwcaps) {
            if (len % 4 != 0) {
                return Status::failure("its glibc-hwcaps section has a size that is not a "
                                       "multiple of 4");
            }
            for (std::size_t k = 0; k < len; k += 4) {
                std::string name;
                if (auto st = string_at(b, read_u32(b, off + k), strings_begin, strings_end,
                                        "glibc-hwcaps name " + std::to_string(k / 4), name);
                    !st.ok()) {
                    return st;
                }
                out.hwcaps.push_back(std::move(name));
            }
        } // Other tags are for newer readers; glibc skips them too.
    }
    return {};
}

Status parse_entry(std::string_view b, std::size_t index, std::size_t strings_begin,
                   std::size_t strings_end, const Sections &sections, LdCacheEntry &e) {
    const std::size_t at = kHeaderSize + index * kEntrySize;
    const std::string what = "entry " + std::to_string(index);
    e.flags = static_cast<std::int32_t>(read_u32(b, at));
    e.hwcap = read_u64(b, at + 16);
    if (auto s =
            string_at(b, read_u32(b, at + 4), strings_begin, strings_end, what + "'s name", e.name);
        !s.ok()) {
        return s;
    }
    if (auto s =
            string_at(b, read_u32(b, at + 8), strings_begin, strings_end, what + "'s path", e.path);
        !s.ok()) {
        return s;
    }
    if ((e.hwcap & kHwcapExtension) != 0) {
        const std::uint64_t k = e.hwcap & 0xffffffffU;
        if (k >= sections.hwcaps.size()) {
            return Status::failure(what + " names glibc-hwcaps subdirectory " + std::to_string(k) +
                                   ", but the file lists only " +
                                   std::to_string(sections.hwcaps.size()));
        }
        e.hwcaps_subdir = sections.hwcaps[static_cast<std::size_t>(k)];
    }
    return {};
}

} // namespace

Status parse_ld_cache(std::string_view bytes, LdCache &out) {
    out = LdCache{};
    if (auto s = check_header(bytes); !s.ok()) {
        return s;
    }
    const std::uint64_t nlibs = read_u32(bytes, kNlibsAt);
    const std::uint64_t strings_len = read_u32(bytes, kStringsLenAt);
    const std::uint64_t strings_begin = kHeaderSize + nlibs * kEntrySize;
    const std::uint64_t strings_end = strings_begin + strings_len;
    if (strings_end > bytes.size()) {
        return Status::failure("it is truncated: the header promises " + std::to_string(nlibs) +
                               " entries and " + std::to_string(strings_len) +
                               " bytes of strings, " + std::to_string(strings_end) +
                               " bytes in all, but the file has " + std::to_string(bytes.size()));
    }
    const auto begin = static_cast<std::size_t>(strings_begin);
    const auto end = static_cast<std::size_t>(strings_end);
    Sections sections;
    if (auto s = parse_sections(bytes, begin, end, sections); !s.ok()) {
        return s;
    }
    out.generator = std::move(sections.generator);
    out.entries.resize(static_cast<std::size_t>(nlibs));
    for (std::size_t i = 0; i < out.entries.size(); ++i) {
        if (auto s = parse_entry(bytes, i, begin, end, sections, out.entries[i]); !s.ok()) {
            out = LdCache{};
            return s;
        }
    }
    return {};
}

const LdCacheEntry *find_ld_cache_entry(const LdCache &cache, std::string_view name,
                                        const Arch &arch) {
    for (const auto &e : cache.entries) {
        if (e.name == name && e.flags == arch.ld_cache_flags && e.hwcaps_subdir.empty()) {
            return &e;
        }
    }
    return nullptr;
}

} // namespace sjail
