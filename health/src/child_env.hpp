// SPDX-License-Identifier: Apache-2.0
// The environment a check gives the programs it runs (pure): a fixed PATH,
// the variables named in `keep` when the check itself has them, and the
// admin's KEY=VALUE extras, which win. Nothing else passes: no LD_PRELOAD,
// LD_LIBRARY_PATH or PATH from whoever started the check.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sjh {

// Where programs given by bare name are looked up, and the PATH they get.
inline constexpr const char *kSafePath =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// `current` holds "KEY=VALUE" entries (the check's own environment). Throws
// std::invalid_argument for an extra that is not KEY=VALUE.
std::vector<std::string> child_environment(const std::vector<std::string> &current,
                                           const std::vector<std::string> &keep,
                                           const std::vector<std::string> &extra);

} // namespace sjh
