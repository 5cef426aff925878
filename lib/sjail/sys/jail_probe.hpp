// SPDX-License-Identifier: Apache-2.0
// The shared jail's filesystem as one step sees it (core/jail_probe.hpp says
// why): what the node's kernel already knows first; the server itself only
// through a probe, a child that must answer within build_timeout=.
#pragma once

#include "sjail/core/config.hpp"
#include "sjail/core/status.hpp"

#include <string>

namespace sjail {

class JailFilesystem {
  public:
    explicit JailFilesystem(const Config &config) : config_(config) {}

    // Whether the server answers: yes while STATE/jail-probe is younger than
    // recheck= seconds, else a probe says. A probe that fails or runs out of
    // time fails the step with one line naming the filesystem, and nothing
    // is kept, so the next step asks again.
    [[nodiscard]] Status check_answers();

    // The jail's loader cache identity (jail_loader_stamp's line): from the
    // kernel's lookup and attribute caches (`jail_root`: an fd of the checked
    // jail) when they hold it, else from a probe (at most one per step).
    [[nodiscard]] Status loader_line(int jail_root, std::string &out);

  private:
    Status probe();

    const Config &config_;
    bool probed_ = false;
    std::string probed_line_;
};

// What /proc/self/mountinfo says of the mount holding `jail` ("fuse.glusterfs
// storage:/jail mounted at /mnt/jail"), found without asking its server.
std::string name_jail_filesystem(const std::string &jail);

} // namespace sjail
