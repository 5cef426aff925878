// SPDX-License-Identifier: Apache-2.0
#include "trusted_path.hpp"

#include "child_env.hpp"
#include "text.hpp"

#include <cerrno>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

namespace sjh {
namespace {

constexpr int kMaxSymlinks = 40; // as the kernel's MAXSYMLINKS

// The components that lead somewhere: no empty ones, no ".".
std::deque<std::string> components(std::string_view path, char delim = '/') {
    std::deque<std::string> out;
    for (const auto part : split(path, delim)) {
        if (!part.empty() && part != ".") {
            out.emplace_back(part);
        }
    }
    return out;
}

std::string parent_of(const std::string &path) {
    const auto slash = path.rfind('/');
    return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

[[noreturn]] void refuse(const std::string &given, const std::string &component,
                         const std::string &why) {
    const auto caller = static_cast<unsigned>(::geteuid());
    throw UntrustedPath(fmt::format(
        "refusing '{}': '{}' {}; what a check uses as {} must be owned by {}, like every "
        "directory above it, and not writable by group or others",
        given, component, why, caller == 0 ? "root" : fmt::format("uid {}", caller),
        trusted_owners(caller)));
}

void check(const std::string &given, const std::string &component, const struct stat &st,
           PathRole role) {
    struct statvfs vfs {};
    const bool read_only = !S_ISLNK(st.st_mode) && ::statvfs(component.c_str(), &vfs) == 0 &&
                           (vfs.f_flag & ST_RDONLY) != 0;
    const auto why = untrusted_because({st.st_uid, st.st_mode, read_only},
                                       static_cast<unsigned>(::geteuid()), role);
    if (!why.empty()) {
        refuse(given, component, why);
    }
}

} // namespace

FoundPath find_trusted(const std::string &path, PathRole role) {
    const auto absolute =
        path.starts_with('/') ? path : std::filesystem::current_path().string() + "/" + path;
    auto todo = components(absolute);
    std::string at = "/";
    struct stat st {};
    if (::lstat("/", &st) != 0) {
        return {"", errno};
    }
    check(path, at, st, PathRole::directory_on_the_way);
    int links = 0;
    while (!todo.empty()) {
        const std::string name = todo.front();
        todo.pop_front();
        if (name == "..") {
            at = parent_of(at);
            continue;
        }
        const std::string next = at == "/" ? "/" + name : at + "/" + name;
        if (::lstat(next.c_str(), &st) != 0) {
            return {"", errno};
        }
        if (S_ISLNK(st.st_mode)) {
            check(path, next, st, PathRole::symlink);
            if (++links > kMaxSymlinks) {
                return {"", ELOOP};
            }
            std::error_code ec;
            const auto target = std::filesystem::read_symlink(next, ec).string();
            if (ec) {
                return {"", ec.value()};
            }
            auto parts = components(target);
            todo.insert(todo.begin(), parts.begin(), parts.end());
            if (target.starts_with('/')) {
                at.assign(1, '/'); // not at = "/": GCC 12 warns falsely (-Wrestrict)
            }
            continue;
        }
        if (!todo.empty() && !S_ISDIR(st.st_mode)) {
            return {"", ENOTDIR};
        }
        check(path, next, st, todo.empty() ? role : PathRole::directory_on_the_way);
        at = next;
    }
    return {at, 0};
}

FoundPath find_trusted_program(const std::string &name) {
    if (name.find('/') != std::string::npos) {
        return find_trusted(name, PathRole::file_to_use);
    }
    for (const auto &dir : components(kSafePath, ':')) {
        const auto candidate = "/" + dir + "/" + name;
        struct stat st {};
        if (::stat(candidate.c_str(), &st) == 0) {
            return find_trusted(candidate, PathRole::file_to_use);
        }
    }
    return {"", ENOENT};
}

std::string trusted_library(const std::string &name) {
    if (name.find('/') == std::string::npos) {
        return name;
    }
    const auto found = find_trusted(name, PathRole::file_to_use);
    return found.error != 0 ? name : found.path;
}

bool check_state_dir(const std::string &dir) {
    const auto found = find_trusted(dir, PathRole::directory_to_write);
    if (found.error == ENOENT) {
        return false;
    }
    if (found.error != 0) {
        throw std::runtime_error(fmt::format("state directory '{}': {}", dir,
                                             std::generic_category().message(found.error)));
    }
    return true;
}

void make_state_dir(const std::string &dir) {
    // Each missing directory is made inside one already checked, so nobody
    // else can have put anything in its way.
    const auto parts = components(std::filesystem::absolute(dir).lexically_normal().string());
    std::string at;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        at += "/" + parts[i];
        const auto role =
            i + 1 == parts.size() ? PathRole::directory_to_write : PathRole::directory_on_the_way;
        auto found = find_trusted(at, role);
        if (found.error == ENOENT) {
            if (::mkdir(at.c_str(), 0755) != 0 && errno != EEXIST) {
                throw std::runtime_error(fmt::format("cannot create the state directory '{}': {}",
                                                     at, std::strerror(errno)));
            }
            found = find_trusted(at, role);
        }
        if (found.error != 0) {
            throw std::runtime_error(fmt::format("state directory '{}': {}", at,
                                                 std::generic_category().message(found.error)));
        }
    }
}

} // namespace sjh
