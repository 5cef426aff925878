// SPDX-License-Identifier: Apache-2.0
// Pure rules about paths and file modes. No system calls.
#pragma once

#include "sjail/core/status.hpp"

#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace sjail {

// An absolute, normalised path: starts with '/', no empty, "." or ".." components,
// no trailing '/', no whitespace or ':' (':' separates bind fields).
Status check_absolute_path(std::string_view what, std::string_view path);

// "/a/b/c" -> {"a", "b", "c"}; "/" -> {}. Expects a path accepted above.
std::vector<std::string> split_components(std::string_view path);

// The fields of `text` between each `separator`, empty ones included:
// "a,,b" -> {"a", "", "b"}; "" -> {""}. The views point into `text`.
[[nodiscard]] std::vector<std::string_view> split(std::string_view text, char separator);

// The words of one line of a configuration file (plugstack.conf, a PAM
// stack): '#' starts a comment, words are separated by blanks (space, tab).
[[nodiscard]] std::vector<std::string> words_of(std::string_view line);

// Pushes the non-empty components of `path` (absolute or relative, as a
// symlink's target) onto `todo` so that the first one is popped first.
void push_components(std::vector<std::string> &todo, std::string_view path);

// The directory holding `path`: "/a/b" -> "/a", "/a" -> "/"; "/" too for a
// name without any '/'.
[[nodiscard]] std::string parent_dir(std::string_view path);

// The last component of `path`: "/a/b" -> "b"; a name without '/' is itself.
[[nodiscard]] std::string base_name(std::string_view path);

// True when `path` is `base` or lies below it ("/dev" is under "/dev", "/devx" is not).
bool is_same_or_below(std::string_view path, std::string_view base);

// The sshd ChrootDirectory rule, for one path component that the jail or a mount
// target goes through: owned by root, not writable by group or others.
// Returns an empty status when fine, else a message naming `path`.
Status check_root_owned(std::string_view path, uid_t owner, mode_t mode);

// The rule for a directory every user writes, as /tmp and /dev/shm: owned by
// root and, when group or others may write it, sticky (so that no user can
// remove or replace another's files).
Status check_shared_root_dir(std::string_view path, uid_t owner, mode_t mode);

} // namespace sjail
