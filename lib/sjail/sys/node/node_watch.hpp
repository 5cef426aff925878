// SPDX-License-Identifier: Apache-2.0
// The node watch (core/node/node_watch.hpp says what it is and what it proves):
// slurmd's queues, a step's way in without the full check, and the arming
// that lets it.
#pragma once

#include "sjail/core/config.hpp"
#include "sjail/core/status.hpp"
#include "sjail/sys/fd.hpp"
#include "sjail/sys/node/kept_namespace.hpp"
#include "sjail/sys/node/node_stamp.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace sjail {

// In slurmd, for its life: the two queues, recorded in STATE/watch. Fails
// where the kernel has no mount notifications (before Linux 6.15) or slurmd
// may not use them (no CAP_SYS_ADMIN); steps then check fully, as without.
class NodeWatch {
  public:
    // Creates the queues and records them; drops any token armed for an
    // earlier slurmd's queues. Calling it again replaces them.
    [[nodiscard]] Status start(const Config &config);
    // Removes STATE/watch and STATE/armed and closes the queues.
    void stop(const Config &config);
    [[nodiscard]] bool running() const { return inotify_.valid(); }

  private:
    Fd inotify_;
    Fd fanotify_;
};

// A step: the kept namespace, without the full check, when STATE/armed is
// current for this step, slurmd's queues are both empty and the jail is
// still, in the kernel's caches, the directory the token names. Otherwise
// false, and the caller checks fully.
bool join_watched(const Config &config, NodeNamespace &out);

// After a step's full check found `now` and joined or built the namespace:
// when slurmd watches and the token is not armed, arms it (the queues
// emptied, every node path the check uses watched, the check done again
// with nothing queued meanwhile). Does nothing otherwise.
void arm_watch(const Config &config, const CurrentStamp &now);

// Under STATE/lock held exclusively, before the kept namespace changes.
void disarm_watch(const Config &config);

// The mounts a step makes or drops below STATE/jobs (a job's kept
// namespaces, on files in slurmd's mount namespace), so that their mount
// events do not send the next steps to the full check.
class OwnMounts {
  public:
    // After mounting on `path` / before unmounting it: its mount, by ID.
    void made(const std::string &path);
    void dropping(const std::string &path);
    // Takes every mount event queued: when they are all of the mounts
    // recorded, the token stays; any other (an admin's, another step's), and
    // it is dropped, as that event would have sent the next step to the full
    // check. Does nothing when nothing was recorded.
    void let_through(const Config &config);

  private:
    std::vector<std::uint64_t> attached_;
    std::vector<std::uint64_t> detached_;
};

} // namespace sjail
