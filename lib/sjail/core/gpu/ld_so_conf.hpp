// SPDX-License-Identifier: Apache-2.0
// Reading /etc/ld.so.conf and the files it includes, the way glibc 2.36's
// ldconfig does, to learn which directories ldconfig would scan. Pure.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sjail {

struct LdSoConf {
    // Library directories in the order ldconfig scans them: absolute, without
    // trailing slashes or a "=TYPE" suffix. A relative line is made absolute
    // against "/", which is where ldconfig -r resolves it.
    std::vector<std::string> dirs;
    // `include` glob patterns, absolute; a relative one is taken relative to
    // the directory of the file that includes it, as ldconfig does.
    std::vector<std::string> includes;
};

// Parses the text of one configuration file found at `file_path`.
LdSoConf parse_ld_so_conf(std::string_view text, std::string_view file_path);

} // namespace sjail
