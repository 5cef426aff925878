// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/path_rules.hpp"

#include <algorithm>
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
    if (path.size() > 1) {
        for (const auto part : split(path.substr(1), '/')) {
            parts.emplace_back(part);
        }
    }
    return parts;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    while (true) {
        const std::size_t end = text.find(separator, start);
        if (end == std::string_view::npos) {
            parts.push_back(text.substr(start));
            return parts;
        }
        parts.push_back(text.substr(start, end - start));
        start = end + 1;
    }
}

std::vector<std::string> words_of(std::string_view line) {
    constexpr std::string_view kBlanks = " \t\n";
    line = line.substr(0, line.find('#'));
    std::vector<std::string> words;
    std::size_t i = 0;
    while ((i = line.find_first_not_of(kBlanks, i)) != std::string_view::npos) {
        const auto end = std::min(line.find_first_of(kBlanks, i), line.size());
        words.emplace_back(line.substr(i, end - i));
        i = end;
    }
    return words;
}

void push_components(std::vector<std::string> &todo, std::string_view path) {
    const auto parts = split(path, '/');
    for (auto part = parts.rbegin(); part != parts.rend(); ++part) {
        if (!part->empty()) {
            todo.emplace_back(*part);
        }
    }
}

std::string parent_dir(std::string_view path) {
    const auto slash = path.rfind('/');
    if (slash == std::string_view::npos || slash == 0) {
        return "/";
    }
    return std::string(path.substr(0, slash));
}

std::string base_name(std::string_view path) {
    const auto slash = path.rfind('/');
    return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

bool is_same_or_below(std::string_view path, std::string_view base) {
    if (base == "/") {
        return !path.empty() && path.front() == '/';
    }
    if (!path.starts_with(base)) {
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

Status check_shared_root_dir(std::string_view path, uid_t owner, mode_t mode) {
    if ((mode & (S_IWGRP | S_IWOTH)) == 0 || owner != 0) {
        return check_root_owned(path, owner, mode);
    }
    if ((mode & S_ISVTX) == 0) {
        return Status::failure(std::string(path) +
                               " is writable by others and not sticky; run: chmod 1777 " +
                               std::string(path));
    }
    return {};
}

} // namespace sjail
