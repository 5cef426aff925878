// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/path_rules.hpp"

#include <sys/stat.h>

namespace sjail {

Status check_absolute_path(std::string_view what, std::string_view path) {
    const std::string name(what);
    if (path.empty()) {
        return Status::failure(name + " is empty; give an absolute path");
    }
    if (path.front() != '/') {
        return Status::failure(name + "=" + std::string(path) +
                               " is not absolute; give a path that starts with /");
    }
    if (path.find_first_of(" \t\n:") != std::string_view::npos) {
        return Status::failure(name + "=" + std::string(path) +
                               " contains whitespace or ':'; such paths are not supported");
    }
    if (path.size() > 1 && path.back() == '/') {
        return Status::failure(name + "=" + std::string(path) +
                               " ends with '/'; write it without the trailing slash");
    }
    for (const auto &component : split_components(path)) {
        if (component.empty() || component == "." || component == "..") {
            return Status::failure(name + "=" + std::string(path) +
                                   " has an empty, '.' or '..' component; write the plain path");
        }
    }
    return {};
}

std::vector<std::string> split_components(std::string_view path) {
    std::vector<std::string> parts;
    if (path.size() <= 1) {
        return parts;
    }
    std::size_t start = 1;
    while (start <= path.size()) {
        const std::size_t end = path.find('/', start);
        const std::size_t stop = end == std::string_view::npos ? path.size() : end;
        parts.emplace_back(path.substr(start, stop - start));
        if (end == std::string_view::npos) {
            break;
        }
        start = end + 1;
    }
    return parts;
}

bool is_same_or_below(std::string_view path, std::string_view base) {
    if (base == "/") {
        return !path.empty() && path.front() == '/';
    }
    if (path.size() < base.size() || path.substr(0, base.size()) != base) {
        return false;
    }
    return path.size() == base.size() || path[base.size()] == '/';
}

Status check_root_owned(std::string_view path, uid_t owner, mode_t mode) {
    if (owner != 0) {
        return Status::failure(std::string(path) + " is owned by uid " + std::to_string(owner) +
                               ", not root; run: chown root:root " + std::string(path));
    }
    if ((mode & (S_IWGRP | S_IWOTH)) != 0) {
        return Status::failure(std::string(path) +
                               " is writable by group or others; run: chmod go-w " +
                               std::string(path));
    }
    return {};
}

} // namespace sjail
