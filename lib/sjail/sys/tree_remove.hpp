// SPDX-License-Identifier: Apache-2.0
// Removing a directory tree that users filled, as root, safely.
#pragma once

#include "sjail/core/status.hpp"

#include <string>

namespace sjail {

// Removes `name` below the directory `parent_fd` and everything in it. Never
// follows a symlink (links are removed, not followed), never leaves the
// filesystem it starts on (a mount below is refused, not entered), and works
// on directory fds only, so no path is resolved twice. Any depth a user makes
// costs a bounded number of file descriptors: a directory too deep to hold
// open is moved up into `name` and removed from there. It goes on past an
// entry it cannot remove and returns the first such error, with `name` left.
Status remove_tree(int parent_fd, const std::string &name);

} // namespace sjail
