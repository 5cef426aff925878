#include "config_file.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace sjh {

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
    std::vector<std::string> args;
    std::ifstream in(path);
    if (in) {
        std::stringstream ss;
        ss << in.rdbuf();
        try {
            args = config_args(ss.str(), section);
        } catch (const std::invalid_argument &e) {
            throw std::invalid_argument(fmt::format("{}: {}", path, e.what()));
        }
    } else if (explicit_path) {
        throw std::invalid_argument(fmt::format("cannot read config file '{}'", path));
    }
    for (int i = 1; i < argc; ++i) {
        args.emplace_back(argv[i]);
    }
    std::reverse(args.begin(), args.end());
    return args;
}

} // namespace sjh
