// SPDX-License-Identifier: Apache-2.0
#include "trust_rules.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

namespace sjh {
namespace {

std::string_view wrong_type(unsigned mode, PathRole role) {
    switch (role) {
    case PathRole::directory_on_the_way:
    case PathRole::directory_to_write:
        return S_ISDIR(mode) ? "" : "is not a directory";
    case PathRole::symlink:
        return S_ISLNK(mode) ? "" : "is not a symlink";
    case PathRole::file_to_use:
        return S_ISREG(mode) ? "" : "is not a regular file";
    }
    return "";
}

} // namespace

std::string untrusted_because(const PathFacts &facts, unsigned caller, PathRole role) {
    if (const auto type = wrong_type(facts.mode, role); !type.empty()) {
        return std::string(type);
    }
    if (facts.owner != 0 && facts.owner != caller) {
        return fmt::format("is owned by uid {}", facts.owner);
    }
    if (role == PathRole::symlink || facts.read_only_mount) {
        return "";
    }
    const bool others_write = (facts.mode & (S_IWGRP | S_IWOTH)) != 0;
    const bool sticky_passage =
        role == PathRole::directory_on_the_way && (facts.mode & S_ISVTX) != 0;
    if (others_write && !sticky_passage) {
        return fmt::format("is writable by group or others (mode {:04o})", facts.mode & 07777U);
    }
    return "";
}

std::string trusted_owners(unsigned caller) {
    return caller == 0 ? "root" : fmt::format("root or uid {}", caller);
}

} // namespace sjh
