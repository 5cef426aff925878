// SPDX-License-Identifier: Apache-2.0
// Finding the files a check runs, loads, reads and writes as root so that no
// other user can steer it. Each path goes through the jail library's
// trusted-path resolver (sjail/sys/trusted_path.hpp) under the checks'
// policy (sjail/core/trust_rules.hpp): a path is followed component by
// component, and refused as soon as a directory, symlink or the file could
// have been changed by someone other than root or the user running the check.
#pragma once

#include "sjail/core/trust_rules.hpp"

#include <stdexcept>
#include <string>

namespace sjh {

using sjail::PathRole;

// A path that another user could have changed. what() names the path, the
// component and why, and the fix.
struct UntrustedPath : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct FoundPath {
    std::string path; // canonical: symlinks followed, every component checked
    int error = 0;    // errno when it does not exist (path is then empty)
};

// `path` (relative ones from the working directory) as `role`.
FoundPath find_trusted(const std::string &path, PathRole role);

// A program to run: `name` as given when it holds a '/', else the first one
// in kSafePath's directories. $PATH is never used.
FoundPath find_trusted_program(const std::string &name);

// A library to dlopen: a bare name is left to the dynamic loader (its cache
// and the system directories); a path must be trusted. A missing one is
// returned as given, for dlopen to report.
std::string trusted_library(const std::string &name);

// The directory the failure counter lives in: the directory itself must be
// writable by nobody else (a sticky directory is not enough). Returns false
// when it does not exist yet.
bool check_state_dir(const std::string &dir);

// The same, creating missing directories (mode 0755) below trusted ones.
void make_state_dir(const std::string &dir);

// Replaces `path` atomically (sjail::write_file_atomically), at its
// canonical path once the directory it is in has passed as one to write in
// (owned by root or the caller, like every directory above it, and writable
// by nobody else), so that no other user can steer the write with a symlink
// or a rename. Throws UntrustedPath, or std::runtime_error naming the path,
// the cause and the fix (a missing directory, a path that names no file).
void write_file_atomically(const std::string &path, std::string_view contents,
                           unsigned mode = 0644);

} // namespace sjh
