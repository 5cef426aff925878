// SPDX-License-Identifier: Apache-2.0
#include "ib_state_file.hpp"

#include "trusted_files.hpp"

#include <fmt/format.h>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace sjh {

IbState read_ib_state(const std::string &path) {
    std::ifstream in(path);
    if (!in) {
        return {};
    }
    std::stringstream ss;
    ss << in.rdbuf();
    try {
        return parse_ib_state(ss.str());
    } catch (const std::exception &e) {
        throw std::runtime_error(
            fmt::format("state file '{}' is not valid: {}; fix it, or delete it to take the "
                        "ports as they are at the next passing run",
                        path, e.what()));
    }
}

void write_ib_state(const std::string &path, const IbState &state) {
    write_file_atomically(path, render_ib_state(state));
}

} // namespace sjh
