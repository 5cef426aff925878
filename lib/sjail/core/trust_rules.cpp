// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/trust_rules.hpp"

#include <sys/stat.h>

namespace sjail {
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

bool owner_trusted(const PathFacts &facts, const TrustPolicy &policy) {
    return facts.owner == 0 || facts.owner == policy.caller;
}

bool others_may_write(const PathFacts &facts, const TrustPolicy &policy, PathRole role) {
    if (role == PathRole::symlink || (policy.read_only_mounts && facts.read_only_mount)) {
        return false;
    }
    const bool sticky_passage = policy.sticky_passage && role == PathRole::directory_on_the_way &&
                                (facts.mode & S_ISVTX) != 0;
    return (facts.mode & (S_IWGRP | S_IWOTH)) != 0 && !sticky_passage;
}

std::string octal_mode(unsigned mode) {
    std::string digits;
    for (int shift = 9; shift >= 0; shift -= 3) {
        digits += static_cast<char>('0' + ((mode >> static_cast<unsigned>(shift)) & 7U));
    }
    return digits;
}

} // namespace

std::string untrusted_because(const PathFacts &facts, const TrustPolicy &policy, PathRole role) {
    if (const auto type = wrong_type(facts.mode, role); !type.empty()) {
        return std::string(type);
    }
    if (!owner_trusted(facts, policy)) {
        return "is owned by uid " + std::to_string(facts.owner);
    }
    if (others_may_write(facts, policy, role)) {
        return "is writable by group or others (mode " + octal_mode(facts.mode) + ")";
    }
    return "";
}

std::string trusted_owners(unsigned caller) {
    return caller == 0 ? "root" : "root or uid " + std::to_string(caller);
}

Status check_trusted(std::string_view shown, const PathFacts &facts, const TrustPolicy &policy,
                     PathRole role) {
    const std::string path(shown);
    if (const auto type = wrong_type(facts.mode, role); !type.empty()) {
        return Status::failure(path + " " + std::string(type));
    }
    if (!owner_trusted(facts, policy)) {
        return Status::failure(path + " is owned by uid " + std::to_string(facts.owner) + ", not " +
                               trusted_owners(policy.caller) + "; run: chown root:root " + path);
    }
    if (others_may_write(facts, policy, role)) {
        return Status::failure(path + " is writable by group or others; run: chmod go-w " + path);
    }
    return {};
}

} // namespace sjail
