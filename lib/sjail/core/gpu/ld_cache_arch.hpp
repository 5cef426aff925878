// SPDX-License-Identifier: Apache-2.0
// Which architecture a loader cache's entries are for. Pure.
//
// ldconfig records each library with its ABI, and the loader takes only the
// entries of its own architecture (find_ld_cache_entry). A cache written
// over another architecture's libraries (a driver container or root of the
// wrong architecture) thus lists a driver that no program here can load:
// that is an error naming both architectures, never a silent "no driver".
#pragma once

#include "sjail/core/arch.hpp"
#include "sjail/core/gpu/ld_cache.hpp"
#include "sjail/core/status.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace sjail {

// The architecture whose loader takes entries with `flags`, as ldconfig -p
// names it: "x86-64", "aarch64", "i386", "armhf", ...; "flags 0x0c03" for
// one this code has no name for.
std::string ld_cache_flags_arch(std::int32_t flags);

// An error when `cache` has entries but none of `arch` (the node's): "the
// loader cache SHOWN holds only aarch64 entries; this node is x86-64 ...",
// the foreign architectures named once each, sorted.
// An empty cache, or one with any entry of `arch`, passes.
Status check_ld_cache_arch(const LdCache &cache, const Arch &arch, std::string_view shown);

} // namespace sjail
