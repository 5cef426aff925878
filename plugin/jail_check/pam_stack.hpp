// SPDX-License-Identifier: Apache-2.0
// A PAM service's session stack as Linux-PAM runs it: its file and the
// files it includes (@include, "session include") read in order, each
// substack ("session substack") a stack of its own, continued lines joined,
// comments dropped, and each line's control read as the actions it takes.
// Pure: the files come from a reader.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace sjail::check {

// The text of a service file: /etc/pam.d/NAME, or NAME when it is an absolute
// path. Nothing when it cannot be read.
using PamFileReader = std::function<std::optional<std::string>(const std::string &name)>;

// One module line of the session phase.
struct PamModuleLine {
    std::string where;        // "FILE:LINE"
    std::string text;         // the line as written, blanks squeezed
    std::string control;      // "required", "[success=1 default=ignore]", ...
    std::string module;       // its path as written ("pam_systemd.so")
    std::size_t stack = 0;    // its (sub)stack: 0 is the service's own
    std::size_t position = 0; // its place among the entries of its stack
    bool ends_stack = false;  // an action is "done": on that result the
                              // stack ends there (sufficient, success=done)
    std::size_t jump = 0;     // the longest "value=N" jump (0: none)
};

// An entry of a stack that is a substack: its place in its parent stack.
struct PamSubstack {
    std::size_t parent = 0;
    std::size_t position = 0;
};

struct PamSessionStack {
    std::vector<PamModuleLine> lines;    // in the order PAM runs them
    std::vector<PamSubstack> substacks;  // index: stack - 1
    std::vector<std::string> unreadable; // what could not be read, and why
};

// The session stack of `service` ("su"), includes followed to a depth of 16.
PamSessionStack read_session_stack(const std::string &service, const PamFileReader &read);

// Whether module path `module` is `name` ("pam_slurm_jail.so") or a path to it.
bool names_module(const std::string &module, const std::string &name);

} // namespace sjail::check
