// SPDX-License-Identifier: Apache-2.0
// Root-level: a jail volume with generations (docs/jail-generations.md) on a
// sandbox node: steps enter the live generation with the users' data bound
// in, see a switch at once, and a job keeps the generation it began on.
#include "sandbox.hpp"
#include "sjail/core/job/job_layout.hpp"
#include "sjail/core/node/generation_holds.hpp"
#include "sjail/sys/job/job_namespace.hpp"
#include "sjail/sys/job/step_entry.hpp"
#include "sjail/sys/node/generation_holds.hpp"
#include "sjail/sys/node/jail_generation.hpp"
#include "sjail/sys/node/node_namespace.hpp"

#include <csignal>
#include <cstdlib>
#include <functional>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using kit::in_child;
using sjail::Config;

namespace {

const std::string kVolume = "/mnt/vol";
const std::string kGenerations = kVolume + "/.slurm-jail/generations";
const std::string kLive = kVolume + "/.slurm-jail/live";

// Replaces the live file, as populate-jail does: a new file renamed over it.
std::string write_live(const std::string &text, mode_t mode = 0644) {
    const std::string tmp = kLive + ".tmp";
    if (auto e = kit::write_file(tmp, text); !e.empty()) {
        return e;
    }
    if (::chmod(tmp.c_str(), mode) != 0 || ::rename(tmp.c_str(), kLive.c_str()) != 0) {
        return kit::errno_text("installing " + kLive);
    }
    return "";
}

std::string live_text(int generation, int previous = 0) {
    return "generation=" + std::to_string(generation) + "\n" +
           (previous > 0 ? "previous=" + std::to_string(previous) + "\n" : "") + "data=/home\n";
}

// The sandbox's jail becomes generation 1 of the volume /mnt/vol, a copy of
// it generation 2 (its release file says "GEN2"); the users' data is
// /mnt/vol/home (alice's file says "data"); generation 1 is live.
std::string make_volume(Config &config) {
    for (const auto &[dir, mode] :
         {std::pair{kVolume, 0755}, std::pair{kVolume + "/.slurm-jail", 0700},
          std::pair{kGenerations, 0700}, std::pair{kVolume + "/home", 0755},
          std::pair{kVolume + "/home/alice", 0755}}) {
        if (auto e = kit::mkdir_p(dir, static_cast<mode_t>(mode)); !e.empty()) {
            return e;
        }
    }
    const std::string one = kGenerations + "/1";
    const std::string two = kGenerations + "/2";
    if (::rename(config.jail.c_str(), one.c_str()) != 0) {
        return kit::errno_text("rename the jail");
    }
    if (std::system(("cp -a " + one + " " + two).c_str()) != 0) {
        return "cp -a of generation 1 failed";
    }
    for (const auto &e :
         {kit::write_file(two + "/etc/slurm-jail-release", "GEN2"),
          kit::write_file(kVolume + "/home/alice/file", "data"), write_live(live_text(1))}) {
        if (!e.empty()) {
            return e;
        }
    }
    config.jail = kVolume;
    return "";
}

// Runs `check` in a child with a sandbox node whose jail is a volume.
std::string on_volume(const std::function<std::string(Config &)> &check) {
    return in_child([&] {
        Config config;
        if (auto e = sandbox::make_node(config); !e.empty()) {
            return e;
        }
        if (auto e = make_volume(config); !e.empty()) {
            return e;
        }
        std::string result = check(config);
        for (const auto job : sjail::running_jobs(config.state_dir)) {
            (void)sjail::delete_job_namespace(config, job);
        }
        return result;
    });
}

// What a step on the node sees at `path` ("" when it cannot read it).
std::string step_reads(const Config &config, const std::string &path) {
    return in_child([&] {
        if (auto s = sjail::enter_node_jail(config); !s.ok()) {
            return "enter: " + s.message();
        }
        return kit::read_file(path);
    });
}

// Job `job`'s step: what its task reads at `path`.
std::string job_reads(const Config &config, std::uint32_t job, const std::string &path) {
    return in_child([&] {
        sjail::StepJail step;
        if (auto s = sjail::enter_job_for_step(config, job, step); !s.ok()) {
            return "step: " + s.message();
        }
        return kit::read_file(path);
    });
}

// A step of `job` that entered and then waits (writing "x" to `started`
// when in), as a running job's step does; killed when it goes out of scope.
class PausedStep {
  public:
    PausedStep(const Config &config, std::uint32_t job) {
        if (::pipe(started_) != 0) {
            return;
        }
        pid_ = ::fork();
        if (pid_ == 0) {
            sjail::StepJail step;
            const bool in = sjail::enter_job_for_step(config, job, step).ok();
            (void)!::write(started_[1], in ? "x" : "f", 1);
            ::pause();
            ::_exit(0);
        }
    }
    // Waits until the step is in the job's jail; false when it failed.
    bool entered() const {
        char c = 0;
        return pid_ > 0 && ::read(started_[0], &c, 1) == 1 && c == 'x';
    }
    PausedStep(const PausedStep &) = delete;
    PausedStep &operator=(const PausedStep &) = delete;
    ~PausedStep() {
        if (pid_ > 0) {
            (void)::kill(pid_, SIGKILL);
            (void)::waitpid(pid_, nullptr, 0);
        }
        for (const int fd : started_) {
            if (fd >= 0) {
                (void)::close(fd);
            }
        }
    }

  private:
    int started_[2] = {-1, -1};
    pid_t pid_ = -1;
};

// The message of a step that must fail.
std::string refusal(const Config &config) {
    sjail::NodeNamespace node;
    const auto s = sjail::acquire_node_namespace(config, node);
    return s.ok() ? "entered" : s.message();
}

bool mentions(const std::string &text, const std::string &part) {
    return text.find(part) != std::string::npos;
}

} // namespace

TEST(Generations, AStepEntersTheLiveGenerationWithTheUsersData) {
    EXPECT_EQ(on_volume([](Config &config) {
                  CHILD_EXPECT(step_reads(config, "/etc/slurm-jail-release") == "JAIL");
                  CHILD_EXPECT(step_reads(config, "/home/alice/file") == "data");
                  // The volume's own top level is nowhere in the jail.
                  CHILD_EXPECT(step_reads(config, "/.slurm-jail/live").empty());
                  const std::string written = in_child([&] {
                      if (auto s = sjail::enter_node_jail(config); !s.ok()) {
                          return s.message();
                      }
                      return kit::write_file("/home/alice/new", "from the job");
                  });
                  CHILD_EXPECT(written.empty());
                  CHILD_EXPECT(kit::read_file(kVolume + "/home/alice/new") == "from the job");
                  Config resolved;
                  CHILD_EXPECT(sjail::resolve_live_jail(config, resolved).ok());
                  CHILD_EXPECT(resolved.jail == kGenerations + "/1");
                  CHILD_EXPECT(resolved.jail_volume == kVolume);
                  return std::string();
              }),
              "");
}

TEST(Generations, ASwitchOnThisNodeIsSeenByTheNextStepAtOnce) {
    EXPECT_EQ(on_volume([](Config &config) {
                  config.recheck_s = 3600; // only the switch itself can tell
                  CHILD_EXPECT(step_reads(config, "/etc/slurm-jail-release") == "JAIL");
                  CHILD_EXPECT(write_live(live_text(2, 1)).empty());
                  CHILD_EXPECT(step_reads(config, "/etc/slurm-jail-release") == "GEN2");
                  CHILD_EXPECT(step_reads(config, "/home/alice/file") == "data");
                  CHILD_EXPECT(write_live(live_text(1, 2)).empty()); // a rollback
                  CHILD_EXPECT(step_reads(config, "/etc/slurm-jail-release") == "JAIL");
                  return std::string();
              }),
              "");
}

TEST(Generations, AJobKeepsTheGenerationItBeganOnANewJobGetsTheLiveOne) {
    EXPECT_EQ(
        on_volume([](Config &config) {
            // The job's first step lives on, as a running job's does,
            // until the end of the test, however it ends.
            const PausedStep first(config, 31);
            CHILD_EXPECT(first.entered());
            CHILD_EXPECT(write_live(live_text(2, 1)).empty());
            CHILD_EXPECT(job_reads(config, 31, "/etc/slurm-jail-release") == "JAIL");
            CHILD_EXPECT(job_reads(config, 31, "/home/alice/file") == "data");
            CHILD_EXPECT(job_reads(config, 32, "/etc/slurm-jail-release") == "GEN2");
            CHILD_EXPECT(step_reads(config, "/etc/slurm-jail-release") == "GEN2");
            // The job's record names the generation it keeps.
            struct stat one {};
            CHILD_EXPECT(::stat((kGenerations + "/1").c_str(), &one) == 0);
            const std::string record = kit::read_file(sjail::job_paths(config.state_dir, 31).jail);
            CHILD_EXPECT(record == std::to_string(one.st_dev) + ":" + std::to_string(one.st_ino));
            return std::string();
        }),
        "");
}

TEST(Generations, ABadLiveFileFailsClosedAndNamesTheFix) {
    EXPECT_EQ(on_volume([](Config &config) {
                  const auto refused = [&](const std::string &why) {
                      const std::string m = refusal(config);
                      return mentions(m, why) ? "" : "expected '" + why + "' in: " + m;
                  };
                  CHILD_EXPECT(write_live("generation=x\ndata=/home\n").empty());
                  CHILD_EXPECT(refused(kLive + ": 'generation=x'").empty());
                  CHILD_EXPECT(refused("populate-jail --rollback --target /mnt/vol").empty());
                  CHILD_EXPECT(write_live("generation=1\ndata=/etc\ndata=/home\n").empty());
                  CHILD_EXPECT(refused("root on the node reads /etc").empty());
                  CHILD_EXPECT(write_live(live_text(1), 0666).empty());
                  CHILD_EXPECT(refused("writable").empty());
                  CHILD_EXPECT(write_live(live_text(1)).empty());
                  CHILD_EXPECT(::chown(kLive.c_str(), 1000, 1000) == 0);
                  CHILD_EXPECT(refused("owned by uid 1000").empty());
                  CHILD_EXPECT(::unlink(kLive.c_str()) == 0);
                  CHILD_EXPECT(::symlink("/mnt/vol/home/alice/file", kLive.c_str()) == 0);
                  CHILD_EXPECT(refused(kLive).empty());
                  CHILD_EXPECT(::unlink(kLive.c_str()) == 0);
                  CHILD_EXPECT(::mkfifo(kLive.c_str(), 0644) == 0);
                  CHILD_EXPECT(refused("is not a regular file").empty());
                  CHILD_EXPECT(::unlink(kLive.c_str()) == 0);
                  CHILD_EXPECT(write_live(live_text(9)).empty());
                  CHILD_EXPECT(refused(kGenerations + "/9").empty());
                  // A live file made right again: steps enter again.
                  CHILD_EXPECT(write_live(live_text(2)).empty());
                  CHILD_EXPECT(step_reads(config, "/etc/slurm-jail-release") == "GEN2");
                  return std::string();
              }),
              "");
}

TEST(Generations, AUserCannotStandInForTheVolumesState) {
    EXPECT_EQ(on_volume([](Config &config) {
                  // .slurm-jail open to a user: they could rename their own
                  // live file (or generation) into place.
                  CHILD_EXPECT(::chmod((kVolume + "/.slurm-jail").c_str(), 0777) == 0);
                  CHILD_EXPECT(mentions(refusal(config), "writable"));
                  CHILD_EXPECT(::chmod((kVolume + "/.slurm-jail").c_str(), 0700) == 0);
                  CHILD_EXPECT(::chown((kGenerations + "/1").c_str(), 1000, 1000) == 0);
                  CHILD_EXPECT(mentions(refusal(config), "owned by uid 1000"));
                  return std::string();
              }),
              "");
}

TEST(Generations, AnotherJailOnTheSameNodeIsNotTakenForTheVolume) {
    EXPECT_EQ(on_volume([](Config &config) {
                  CHILD_EXPECT(step_reads(config, "/etc/slurm-jail-release") == "JAIL");
                  // jail= now names a single-directory jail: what the node
                  // recorded of the volume's live file is not its.
                  Config single;
                  CHILD_EXPECT(sandbox::make_layout("/mnt", single).empty());
                  CHILD_EXPECT(
                      kit::write_file("/mnt/jail/etc/slurm-jail-release", "SINGLE").empty());
                  Config other = config;
                  other.jail = single.jail;
                  CHILD_EXPECT(step_reads(other, "/etc/slurm-jail-release") == "SINGLE");
                  CHILD_EXPECT(step_reads(config, "/etc/slurm-jail-release") == "JAIL");
                  return std::string();
              }),
              "");
}

namespace {

// This node's record of the generations it holds, on the volume.
std::string node_record() {
    char name[256] = {};
    (void)::gethostname(name, sizeof name - 1);
    const std::string text = kit::read_file(kVolume + "/.slurm-jail/nodes/" + name);
    std::string held;
    for (std::size_t at = text.find("generation="); at != std::string::npos;
         at = text.find("generation=", at + 1)) {
        held += text.substr(at + 11, text.find('\n', at) - at - 11) + " ";
    }
    return held;
}

} // namespace

TEST(Generations, TheNodeRecordsTheGenerationsItAndItsJobsHold) {
    EXPECT_EQ(on_volume([](Config &config) {
                  CHILD_EXPECT(step_reads(config, "/etc/slurm-jail-release") == "JAIL");
                  CHILD_EXPECT(node_record() == "1 ");
                  {
                      const PausedStep first(config, 31);
                      CHILD_EXPECT(first.entered());
                      CHILD_EXPECT(write_live(live_text(2, 1)).empty());
                      // The node's namespace moves to 2; job 31 keeps 1.
                      CHILD_EXPECT(step_reads(config, "/etc/slurm-jail-release") == "GEN2");
                      CHILD_EXPECT(node_record() == "1 2 ");
                      CHILD_EXPECT(job_reads(config, 32, "/etc/slurm-jail-release") == "GEN2");
                      CHILD_EXPECT(node_record() == "1 2 ");
                  }
                  // Job 31 ends: the node holds only generation 2.
                  CHILD_EXPECT(sjail::delete_job_namespace(config, 31).ok());
                  CHILD_EXPECT(sjail::record_generation_holds(config).ok());
                  CHILD_EXPECT(node_record() == "2 ");
                  // A hold left by a job whose state is gone (a crash) goes
                  // with slurmd's start.
                  const std::string orphan = sjail::job_hold_path(config.state_dir, 77);
                  CHILD_EXPECT(kit::write_file(orphan, "1").empty());
                  CHILD_EXPECT(sjail::record_generation_holds(config).ok());
                  CHILD_EXPECT(node_record() == "1 2 ");
                  (void)sjail::delete_stale_jobs(config);
                  CHILD_EXPECT(::access(orphan.c_str(), F_OK) != 0);
                  CHILD_EXPECT(sjail::record_generation_holds(config).ok());
                  CHILD_EXPECT(node_record() == "2 ");
                  return std::string();
              }),
              "");
}

TEST(Generations, TheRecordIsNeverWrittenThroughALink) {
    EXPECT_EQ(on_volume([](Config &config) {
                  const std::string elsewhere = kVolume + "/home/alice/nodes";
                  CHILD_EXPECT(kit::mkdir_p(elsewhere, 0700).empty());
                  CHILD_EXPECT(
                      ::symlink(elsewhere.c_str(), (kVolume + "/.slurm-jail/nodes").c_str()) == 0);
                  // A generation no record can name is not entered.
                  const std::string m = refusal(config);
                  CHILD_EXPECT(mentions(m, "recording the jail generations this node holds"));
                  CHILD_EXPECT(mentions(m, kVolume + "/.slurm-jail/nodes"));
                  CHILD_EXPECT(::rmdir(elsewhere.c_str()) == 0); // nothing was written in it
                  return std::string();
              }),
              "");
}
