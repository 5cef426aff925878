// SPDX-License-Identifier: Apache-2.0
#include "trusted_files.hpp"

#include "child_env.hpp"
#include "sjail/sys/small_file.hpp"
#include "sjail/sys/trusted_path.hpp"
#include "text.hpp"

#include <cerrno>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sjh {
namespace {

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

[[noreturn]] void refuse(const std::string &given, const std::string &component,
                         const std::string &why) {
    const auto caller = static_cast<unsigned>(::geteuid());
    throw UntrustedPath(fmt::format(
        "refusing '{}': '{}' {}; what a check uses as {} must be owned by {}, like every "
        "directory above it, and not writable by group or others",
        given, component, why, caller == 0 ? "root" : fmt::format("uid {}", caller),
        sjail::trusted_owners(caller)));
}

sjail::TrustedKind kind_for(PathRole role) {
    switch (role) {
    case PathRole::file_to_use:
        return sjail::TrustedKind::File;
    case PathRole::directory_to_write:
        return sjail::TrustedKind::Directory;
    case PathRole::directory_on_the_way:
    case PathRole::symlink:
        break;
    }
    return sjail::TrustedKind::PassedDirectory;
}

// Where `path` may be written: its canonical path, below a directory that
// passed as one to write in.
std::string trusted_file_to_write(const std::string &path) {
    const std::filesystem::path given(path);
    const auto name = given.filename().string();
    if (name.empty() || name == "." || name == "..") {
        throw std::runtime_error(
            fmt::format("cannot write '{}': it names a directory, not a file; give a file's path "
                        "(such as DIR/slurm_jail.prom)",
                        path));
    }
    const auto dir = given.has_parent_path() ? given.parent_path().string() : std::string(".");
    const auto found = find_trusted(dir, PathRole::directory_to_write);
    if (found.error != 0) {
        throw std::runtime_error(fmt::format("cannot write '{}': its directory '{}': {}; create it "
                                             "first, owned by root and writable by nobody else",
                                             path, dir,
                                             std::generic_category().message(found.error)));
    }
    return found.path.ends_with('/') ? found.path + name : found.path + "/" + name;
}

} // namespace

FoundPath find_trusted(const std::string &path, PathRole role) {
    const auto absolute =
        path.starts_with('/') ? path : std::filesystem::current_path().string() + "/" + path;
    const auto policy = sjail::checks_policy(static_cast<unsigned>(::geteuid()));
    sjail::TrustedOpen opened;
    const auto status =
        sjail::open_trusted_on_node(absolute, kind_for(role), opened, false, policy);
    if (!opened.refused_because.empty()) {
        refuse(path, opened.shown, opened.refused_because);
    }
    if (opened.error != 0) {
        return {"", opened.error};
    }
    if (!status.ok()) {
        throw UntrustedPath(fmt::format("refusing '{}': {}", path, status.message()));
    }
    return {opened.shown, 0};
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

void write_file_atomically(const std::string &path, std::string_view contents, unsigned mode) {
    const auto target = trusted_file_to_write(path);
    if (auto s = sjail::write_file_atomically(target, contents, static_cast<mode_t>(mode));
        !s.ok()) {
        throw std::runtime_error(s.message());
    }
}

} // namespace sjh
