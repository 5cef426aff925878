// Helpers for the root-level tests: forked children, private mount
// namespaces and small jails built from scratch.
#pragma once

#include "config.hpp"

#include <functional>
#include <string>
#include <vector>

namespace sandbox {

// Runs `fn` in a forked child and returns what it returned: "" means pass,
// anything else describes the failure. A crash or exit is reported too.
std::string in_child(const std::function<std::string()> &fn);

// In the current (child) process: a private mount namespace, a slave of the
// host's, with a tmpfs on /mnt; under it a jail and node-local directories:
//   /mnt/jail         the jail, with /etc/slurm-jail-release ("JAIL") and mount points
//   /mnt/node/...     munge, conf, spool, tmp and data (a file "hello" = "hi")
//   /mnt/host-only    a file that only the host view has
// `config` is set to use them, with bind=/mnt/node/data:/opt/data:ro.
std::string make_node(sjail::Config &config);

// Same layout below `base` (an existing root-owned directory), without
// namespaces, for tests that watch the host's mount table.
std::string make_layout(const std::string &base, sjail::Config &config);

std::string write_file(const std::string &path, const std::string &text);
std::string read_file(const std::string &path);

// Mount points (field 5 of /proc/self/mountinfo) at or below `prefix`.
std::vector<std::string> mounts_below(const std::string &prefix);

} // namespace sandbox

// In a child: return a failure text from the enclosing function unless `cond`.
#define CHILD_EXPECT(cond)                                                                         \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            return std::string(__FILE__) + ":" + std::to_string(__LINE__) + ": " #cond;            \
        }                                                                                          \
    } while (0)
