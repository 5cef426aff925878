// SPDX-License-Identifier: Apache-2.0
// The shared jail's filesystem as one step sees it (core/node/jail_probe.hpp says
// why): what the node's kernel already knows first; the server itself only
// through a probe, a child that must answer within build_timeout=.
#pragma once

#include "sjail/core/config.hpp"
#include "sjail/core/node/jail_probe.hpp"
#include "sjail/core/status.hpp"

#include <cstdint>
#include <functional>
#include <optional>
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

    // Asks the server now, whatever the last answer; `keep_answer`: record
    // it in STATE/jail-probe (slurm-jail-check does not). The jail root's
    // fresh attributes stay in the kernel's cache.
    [[nodiscard]] Status probe(bool keep_answer = true);

    // Whether this step asked the server already (answered or not), and
    // what that probe said.
    [[nodiscard]] bool asked() const { return asked_; }
    [[nodiscard]] const Status &last_answer() const { return last_answer_; }
    // Whether that probe got no answer within build_timeout=.
    [[nodiscard]] bool silent() const { return silent_; }

  private:
    Status ask_server(bool keep_answer);
    // Asked, and answered.
    [[nodiscard]] bool answered() const { return asked_ && last_answer_.ok(); }

    const Config &config_;
    bool asked_ = false;
    std::string probed_line_;
    Status last_answer_;
    bool silent_ = false;
};

// Runs `answer` in a child, within build_timeout=, with its standard
// descriptors on /dev/null; `report` receives what it returned, and
// `in_time` whether it returned within the deadline (a child stuck on a
// dead server is killed). Fails only when the child cannot be started.
Status ask_in_child(const Config &config, const char *what,
                    const std::function<std::string()> &answer, std::string &report, bool &in_time);

// What a step says when the jail's filesystem did not answer a child of its
// (a probe, a read of the live generation) within build_timeout=, or
// answered with an error (`why`).
Status filesystem_silent(const Config &config);
Status filesystem_cannot_serve(const Config &config, const std::string &why);

// Seconds since boot (CLOCK_BOOTTIME), the clock of STATE/jail-probe.
std::int64_t boot_seconds();

// When the jail's filesystem last answered a probe (STATE/jail-probe, below
// the state directory `state_dir`).
std::optional<JailProbeMemo> read_probe_memo(const std::string &state_dir);

// Whether `jail` is on a network or FUSE filesystem (NFS, Lustre, CephFS,
// SMB, GPFS, 9p, FUSE: GlusterFS, virtiofs, ...), and whether it is the root
// of its mount; from the kernel, without asking the server.
struct JailMount {
    bool network = false;
    bool mount_root = false;
};
Status jail_mount_kind(const std::string &jail, JailMount &out);

// What /proc/self/mountinfo says of the mount holding `jail` ("fuse.glusterfs
// storage:/jail mounted at /mnt/jail"), found without asking its server.
std::string name_jail_filesystem(const std::string &jail);

} // namespace sjail
