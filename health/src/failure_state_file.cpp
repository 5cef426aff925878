// SPDX-License-Identifier: Apache-2.0
#include "failure_state_file.hpp"

#include "failure_count.hpp"
#include "trusted_files.hpp"

#include <fmt/format.h>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace sjh {

unsigned read_failure_count(const std::string &path, std::string_view check) {
    std::ifstream in(path);
    if (!in) {
        return 0;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    try {
        return parse_failure_state(ss.str(), check);
    } catch (const std::exception &e) {
        throw std::runtime_error(fmt::format(
            "state file '{}' is not valid: {}; fix it or delete it to restart counting at 0", path,
            e.what()));
    }
}

void write_failure_count(const std::string &path, std::string_view check, unsigned count) {
    write_file_atomically(path, render_failure_state(check, count));
}

} // namespace sjh
