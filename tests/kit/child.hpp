// SPDX-License-Identifier: Apache-2.0
// Forked children that report back: a test's body runs in a child (its own
// namespaces and mounts die with it) and sends its verdict through a pipe.
#pragma once

#include <functional>
#include <string>

namespace kit {

struct ChildReport {
    int wait_status = -1; // from waitpid; -1 when no child could be started
    std::string text;     // what the child's function returned
    [[nodiscard]] bool exited_cleanly() const;
};

// Runs `fn` in a forked child, which sends what `fn` returned and exits 0
// (1 when the text could not be sent). An exception becomes "exception: WHAT".
ChildReport run_child(const std::function<std::string()> &fn);

// For tests: "" means pass, anything else describes the failure; a child
// that crashed or exited on its own is reported with its wait status.
std::string in_child(const std::function<std::string()> &fn);

} // namespace kit

// In a child: return a failure text from the enclosing function unless `cond`.
#define CHILD_EXPECT(cond)                                                                         \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            return std::string(__FILE__) + ":" + std::to_string(__LINE__) + ": " #cond;            \
        }                                                                                          \
    } while (0)
