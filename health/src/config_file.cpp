// SPDX-License-Identifier: Apache-2.0
#include "config_file.hpp"

#include "trusted_files.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <sys/stat.h>
#include <sys/sysmacros.h>

namespace sjh {
namespace {

bool is_null_device(const std::string &path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 &&
           minor(st.st_rdev) == 3;
}

} // namespace

std::vector<std::string> config_section_args(const std::string &path, std::string_view section,
                                             bool required) {
    if (is_null_device(path)) {
        return {};
    }
    FoundPath found;
    try {
        found = find_trusted(path, PathRole::file_to_use);
    } catch (const UntrustedPath &e) {
        throw std::invalid_argument(fmt::format("config file: {}", e.what()));
    }
    if (found.error != 0) {
        if (required) {
            throw std::invalid_argument(fmt::format("cannot read config file '{}'", path));
        }
        return {};
    }
    std::ifstream in(found.path);
    if (!in) {
        throw std::invalid_argument(fmt::format("cannot read config file '{}'", path));
    }
    std::stringstream ss;
    ss << in.rdbuf();
    try {
        return config_args(ss.str(), section);
    } catch (const std::invalid_argument &e) {
        throw std::invalid_argument(fmt::format("{}: {}", path, e.what()));
    }
}

std::vector<std::string> args_with_config(int argc, const char *const *argv,
                                          std::string_view section) {
    std::string path = kDefaultConfig;
    bool explicit_path = false;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--config" && i + 1 < argc) {
            path = argv[i + 1];
            explicit_path = true;
        } else if (a.starts_with("--config=")) {
            path = std::string(a.substr(9));
            explicit_path = true;
        }
    }
    auto args = config_section_args(path, section, explicit_path);
    for (int i = 1; i < argc; ++i) {
        args.emplace_back(argv[i]);
    }
    std::reverse(args.begin(), args.end());
    return args;
}

} // namespace sjh
