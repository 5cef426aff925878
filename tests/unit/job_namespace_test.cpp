// SPDX-License-Identifier: Apache-2.0
// Root-level: a job's own namespaces on a sandbox node, entered as slurmstepd
// and its tasks enter them.
#include "sandbox.hpp"
#include "sjail/core/job/job_layout.hpp"
#include "sjail/sys/job/job_namespace.hpp"
#include "sjail/sys/job/step_entry.hpp"
#include "sjail/sys/node/node_namespace.hpp"
#include "sjail/sys/state_dir.hpp"

#include <algorithm>
#include <csignal>
#include <dirent.h>
#include <fcntl.h>
#include <filesystem>
#include <future>
#include <gtest/gtest.h>
#include <linux/magic.h>
#include <mqueue.h>
#include <sstream>
#include <sys/ipc.h>
#include <sys/mount.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using kit::in_child;
using sjail::Config;

namespace {

constexpr uid_t kNobody = 65534;
constexpr key_t kIpcKey = 0x5a11;
constexpr const char *kQueue = "/sjail-test-queue";

// Which of the test's IPC objects the caller's IPC namespace holds.
std::string ipc_objects_seen() {
    std::string seen;
    const auto add = [&seen](bool there, const char *name) {
        if (there) {
            seen += seen.empty() ? name : std::string(" ") + name;
        }
    };
    add(::shmget(kIpcKey, 0, 0) >= 0, "shm");
    add(::msgget(kIpcKey, 0) >= 0, "msg");
    add(::semget(kIpcKey, 0, 0) >= 0, "sem");
    const mqd_t q = ::mq_open(kQueue, O_RDONLY);
    add(q != static_cast<mqd_t>(-1), "mq");
    if (q != static_cast<mqd_t>(-1)) {
        (void)::mq_close(q);
    }
    return seen;
}

// Runs `task` as slurmstepd does: a child enters the job for its step, then
// forks the task, which moves into the tasks' view.
std::string as_task(const Config &config, std::uint32_t job,
                    const std::function<std::string()> &task) {
    return in_child([&] {
        sjail::StepJail step;
        if (auto s = sjail::enter_job_for_step(config, job, step); !s.ok()) {
            return "step: " + s.message();
        }
        if (auto s = sjail::start_children_in_job(step); !s.ok()) {
            return "user_init: " + s.message();
        }
        const std::string result = in_child([&] {
            if (auto s = sjail::enter_tasks_view(step, sjail::PidCheck::Required); !s.ok()) {
                return "task: " + s.message();
            }
            return task();
        });
        sjail::stop_children_in_job(step);
        // slurmstepd creates threads after its tasks: that must work again.
        std::thread io([] {});
        io.join();
        return result;
    });
}

std::vector<std::string> pids_in_proc() {
    std::vector<std::string> pids;
    DIR *dir = ::opendir("/proc");
    while (dir != nullptr) {
        const dirent *e = ::readdir(dir);
        if (e == nullptr) {
            break;
        }
        if (sjail::job_of_entry(e->d_name)) {
            pids.emplace_back(e->d_name);
        }
    }
    if (dir != nullptr) {
        ::closedir(dir);
    }
    return pids;
}

bool is_tmpfs(const char *path) {
    struct statfs fs {};
    return ::statfs(path, &fs) == 0 && static_cast<unsigned long>(fs.f_type) == TMPFS_MAGIC;
}

std::string super_options_of(const std::string &mount_point) {
    const std::string info = kit::read_file("/proc/self/mountinfo");
    std::string last;
    std::size_t start = 0;
    while (start < info.size()) {
        const std::size_t end = info.find('\n', start);
        const std::string line = info.substr(start, end - start);
        if (line.find(" " + mount_point + " ") != std::string::npos) {
            last = line.substr(line.rfind(' ') + 1);
        }
        start = end == std::string::npos ? info.size() : end + 1;
    }
    return last;
}

// Deletes every job's namespaces on the node: a job's init lives outside
// the sandbox node's process tree and would outlive the test.
void delete_all_jobs(const Config &config) {
    DIR *dir = ::opendir(sjail::jobs_dir(config.state_dir).c_str());
    std::vector<std::uint32_t> jobs;
    while (dir != nullptr) {
        const dirent *e = ::readdir(dir);
        if (e == nullptr) {
            break;
        }
        if (const auto job = sjail::job_of_entry(e->d_name)) {
            jobs.push_back(*job);
        }
    }
    if (dir != nullptr) {
        ::closedir(dir);
    }
    for (const auto job : jobs) {
        (void)sjail::delete_job_namespace(config, job);
    }
}

// Runs `check` on a fresh sandbox node (see sandbox.hpp).
std::string on_node(const std::function<std::string(Config &)> &check) {
    return in_child([&] {
        Config config;
        if (auto e = sandbox::make_node(config); !e.empty()) {
            return e;
        }
        std::string result = check(config);
        delete_all_jobs(config);
        return result;
    });
}

// In a probe born again in the job: "" when nothing lives in the job but its
// init and this probe with its keeper (the dead wait for a reaper outside).
std::string living_others_in_job(const sjail::StepJail &step) {
    if (!sjail::enter_tasks_view(step, sjail::PidCheck::RebirthIfNeeded).ok()) {
        return "join failed";
    }
    const std::vector<std::string> mine{"1", std::to_string(::getpid()),
                                        std::to_string(::getppid())};
    for (const std::string &pid : pids_in_proc()) {
        const bool dead =
            kit::read_file("/proc/" + pid + "/stat").find(") Z ") != std::string::npos;
        if (!dead && std::find(mine.begin(), mine.end(), pid) == mine.end()) {
            return "process " + pid + " is left";
        }
    }
    return "";
}

} // namespace

TEST(JobNamespace, ATaskSeesOnlyItsJobAndCannotReachBeyondIt) {
    EXPECT_EQ(on_node([](Config &config) {
                  return as_task(config, 7, [] {
                      CHILD_EXPECT(kit::read_file("/etc/slurm-jail-release") == "JAIL");
                      // The job's init is PID 1 and the task the only other process.
                      const auto pids = pids_in_proc();
                      CHILD_EXPECT(pids.size() == 2);
                      CHILD_EXPECT(std::to_string(::getpid()) != "1");
                      CHILD_EXPECT(kit::read_file("/proc/1/comm") == "sjail-job-init\n");
                      // Its command line is its own, not the creator's (a
                      // slurmd or slurmstepd, here the test program).
                      std::string cmdline = kit::read_file("/proc/1/cmdline");
                      cmdline.erase(cmdline.find_last_not_of('\0') + 1);
                      CHILD_EXPECT(cmdline == "sjail-job-init");
                      // As a user, the init's root (which is the jail anyway) is out of reach.
                      CHILD_EXPECT(::setgid(kNobody) == 0 && ::setuid(kNobody) == 0);
                      char link[256];
                      CHILD_EXPECT(::readlink("/proc/1/root", link, sizeof(link)) < 0 &&
                                   errno == EACCES);
                      CHILD_EXPECT(::kill(1, SIGKILL) != 0);
                      return std::string();
                  });
              }),
              "");
}

TEST(JobNamespace, SlurmstepdActsForTheUserWhereProcShowsOnlyTheJob) {
    EXPECT_EQ(on_node([](Config &config) {
                  return in_child([&] {
                      sjail::StepJail step;
                      if (auto s = sjail::enter_job_for_step(config, 11, step); !s.ok()) {
                          return "step: " + s.message();
                      }
                      // Before the tasks: -i/-o/-e names resolve in the tasks
                      // view, where only the job's init is (this thread is not
                      // in the job's PID namespace, so not even itself).
                      CHILD_EXPECT(pids_in_proc() == std::vector<std::string>{"1"});
                      CHILD_EXPECT(kit::read_file("/proc/1/comm") == "sjail-job-init\n");
                      // After them (slurmstepd started threads meanwhile,
                      // which share its filesystem attributes): the node's
                      // /proc, for Slurm, and nothing can be executed there.
                      std::promise<void> moved;
                      std::thread io([done = moved.get_future()]() mutable { done.wait(); });
                      const sjail::Status to_stepd = sjail::move_on_to_stepd_view(step);
                      moved.set_value();
                      io.join();
                      if (!to_stepd.ok()) {
                          return "stepd view: " + to_stepd.message();
                      }
                      CHILD_EXPECT(pids_in_proc().size() > 2);
                      struct statvfs root {};
                      CHILD_EXPECT(::statvfs("/", &root) == 0 && (root.f_flag & ST_NOEXEC) != 0);
                      CHILD_EXPECT(kit::read_file("/etc/slurm-jail-release") == "JAIL");
                      return std::string();
                  });
              }),
              "");
}

TEST(JobNamespace, AScriptForkedAfterTheTasksIsBornAgainInTheJob) {
    EXPECT_EQ(
        on_node([](Config &config) {
            return in_child([&] {
                sjail::StepJail step;
                if (auto s = sjail::enter_job_for_step(config, 12, step); !s.ok()) {
                    return "step: " + s.message();
                }
                if (auto s = sjail::move_on_to_stepd_view(step); !s.ok()) {
                    return "stepd view: " + s.message();
                }
                // A task epilog: forked outside the task window.
                const std::string in_job = in_child([&] {
                    if (auto s = sjail::enter_tasks_view(step, sjail::PidCheck::RebirthIfNeeded);
                        !s.ok()) {
                        return "join: " + s.message();
                    }
                    struct stat ns {};
                    CHILD_EXPECT(::stat("/proc/self/ns/pid", &ns) == 0 && ns.st_ino == step.pid_ns);
                    CHILD_EXPECT(::getpid() != 1);
                    CHILD_EXPECT(kit::read_file("/proc/1/comm") == "sjail-job-init\n");
                    // The waiter's place is outside: the init, the keeper
                    // (named as such: a fork of slurmstepd, it would show
                    // slurmstepd's command line) and the script itself.
                    CHILD_EXPECT(pids_in_proc().size() == 3);
                    const std::string keeper = "/proc/" + std::to_string(::getppid());
                    CHILD_EXPECT(kit::read_file(keeper + "/comm") == "sjail-script-ke\n");
                    std::string cmdline = kit::read_file(keeper + "/cmdline");
                    cmdline.erase(cmdline.find_last_not_of('\0') + 1);
                    CHILD_EXPECT(cmdline == "sjail-script-keeper");
                    return std::string();
                });
                if (!in_job.empty()) {
                    return in_job;
                }
                // The waiter ends with the script's exit status.
                const kit::ChildReport report = kit::run_child([&]() -> std::string {
                    if (!sjail::enter_tasks_view(step, sjail::PidCheck::RebirthIfNeeded).ok()) {
                        return "join failed";
                    }
                    ::_exit(3);
                });
                CHILD_EXPECT(WIFEXITED(report.wait_status) && WEXITSTATUS(report.wait_status) == 3);
                // A task must have been born in the job: no second chance.
                const std::string task = in_child([&] {
                    return sjail::enter_tasks_view(step, sjail::PidCheck::Required).message();
                });
                CHILD_EXPECT(task.find("not born in the job") != std::string::npos);
                return std::string();
            });
        }),
        "");
}

// Slurm runs a task epilog in a process group of its own (setpgid after the
// join) and, when it overruns, kills the group of the process it forked:
// the waiter. The script and what it started in its group die with it.
TEST(JobNamespace, SlurmsKillOfAnOverrunningScriptEndsItWhole) {
    EXPECT_EQ(
        on_node([](Config &config) {
            return in_child([&] {
                sjail::StepJail step;
                if (auto s = sjail::enter_job_for_step(config, 13, step); !s.ok()) {
                    return "step: " + s.message();
                }
                if (auto s = sjail::move_on_to_stepd_view(step); !s.ok()) {
                    return "stepd view: " + s.message();
                }
                int ready[2];
                CHILD_EXPECT(::pipe(ready) == 0);
                const pid_t waiter = ::fork();
                if (waiter == 0) {
                    ::close(ready[0]);
                    if (!sjail::enter_tasks_view(step, sjail::PidCheck::RebirthIfNeeded).ok()) {
                        ::_exit(100);
                    }
                    (void)::setpgid(0, 0); // as slurmstepd does after the join
                    // Like slurmstepd's scripts, it keeps no descriptor
                    // of its parent's (this test's own pipes) but one.
                    if (::dup2(ready[1], 3) != 3 || ::close_range(4, ~0U, 0) != 0) {
                        ::_exit(104);
                    }
                    if (::fork() == 0) { // the script's own child, in its group
                        for (;;) {
                            ::pause();
                        }
                    }
                    if (::write(3, "r", 1) != 1) {
                        ::_exit(103);
                    }
                    for (;;) {
                        ::pause();
                    }
                }
                ::close(ready[1]);
                char byte = 0;
                CHILD_EXPECT(::read(ready[0], &byte, 1) == 1);
                ::close(ready[0]);
                CHILD_EXPECT(::killpg(waiter, SIGKILL) == 0); // Slurm's kill
                int status = 0;
                CHILD_EXPECT(::waitpid(waiter, &status, 0) == waiter);
                // Neither the script nor its child is left in the job.
                bool gone = false;
                for (int i = 0; i < 100 && !gone; ++i) {
                    gone = in_child([&] { return living_others_in_job(step); }).empty();
                    if (!gone) {
                        ::usleep(20000);
                    }
                }
                CHILD_EXPECT(gone);
                return std::string();
            });
        }),
        "");
}

TEST(JobNamespace, PrivateTmpAndShmPerJobSharedByItsSteps) {
    EXPECT_EQ(on_node([](Config &config) {
                  const auto write_in_job = as_task(config, 1, [] {
                      CHILD_EXPECT(is_tmpfs("/tmp") && is_tmpfs("/dev/shm"));
                      struct stat st {};
                      CHILD_EXPECT(::stat("/tmp", &st) == 0 && (st.st_mode & 07777) == 01777);
                      CHILD_EXPECT(kit::write_file("/tmp/mine", "job1").empty());
                      CHILD_EXPECT(kit::write_file("/dev/shm/mine", "job1").empty());
                      return std::string();
                  });
                  CHILD_EXPECT(write_in_job.empty());
                  // Another step of the same job sees it; another job does not.
                  CHILD_EXPECT(as_task(config, 1, [] {
                                   CHILD_EXPECT(kit::read_file("/tmp/mine") == "job1");
                                   CHILD_EXPECT(kit::read_file("/dev/shm/mine") == "job1");
                                   return std::string();
                               }).empty());
                  CHILD_EXPECT(as_task(config, 2, [] {
                                   CHILD_EXPECT(::access("/tmp/mine", F_OK) != 0);
                                   CHILD_EXPECT(::access("/dev/shm/mine", F_OK) != 0);
                                   return std::string();
                               }).empty());
                  // Nothing reached the node-wide directory.
                  CHILD_EXPECT(::access("/mnt/node/tmp/mine", F_OK) != 0);
                  return std::string();
              }),
              "");
}

// System V IPC and POSIX message queues: a job's are its own (another job
// and the node see none of them, its later steps see them all) and go with
// it (the same job id made anew starts empty).
TEST(JobNamespace, SystemVIpcAndMessageQueuesAreTheJobsOwnAndGoWithIt) {
    EXPECT_EQ(on_node([](Config &config) {
                  constexpr std::uint32_t kJob = 31;
                  CHILD_EXPECT(as_task(config, kJob, [] {
                                   CHILD_EXPECT(::shmget(kIpcKey, 1 << 20, IPC_CREAT | 0600) >= 0);
                                   CHILD_EXPECT(::msgget(kIpcKey, IPC_CREAT | 0600) >= 0);
                                   CHILD_EXPECT(::semget(kIpcKey, 1, IPC_CREAT | 0600) >= 0);
                                   const mqd_t q =
                                       ::mq_open(kQueue, O_CREAT | O_RDWR, 0600, nullptr);
                                   CHILD_EXPECT(q != static_cast<mqd_t>(-1));
                                   CHILD_EXPECT(::mq_send(q, "left", 4, 0) == 0);
                                   return std::string();
                               }).empty());
                  CHILD_EXPECT(as_task(config, kJob, [] {
                                   CHILD_EXPECT(ipc_objects_seen() == "shm msg sem mq");
                                   return std::string();
                               }).empty());
                  CHILD_EXPECT(as_task(config, kJob + 1, [] {
                                   CHILD_EXPECT(ipc_objects_seen().empty());
                                   return std::string();
                               }).empty());
                  CHILD_EXPECT(ipc_objects_seen().empty()); // the node's
                  CHILD_EXPECT(sjail::delete_job_namespace(config, kJob).ok());
                  CHILD_EXPECT(as_task(config, kJob, [] {
                                   CHILD_EXPECT(ipc_objects_seen().empty());
                                   return std::string();
                               }).empty());
                  return std::string();
              }),
              "");
}

TEST(JobNamespace, AFullTmpOfOneJobDoesNotStopAnother) {
    EXPECT_EQ(on_node([](Config &config) {
                  config.job_tmp_size = "64k";
                  CHILD_EXPECT(as_task(config, 1, [] {
                                   const std::string big(128 * 1024, 'x');
                                   CHILD_EXPECT(!kit::write_file("/tmp/big", big).empty());
                                   return std::string();
                               }).empty());
                  CHILD_EXPECT(as_task(config, 2, [] {
                                   CHILD_EXPECT(kit::write_file("/tmp/small", "ok").empty());
                                   return std::string();
                               }).empty());
                  return std::string();
              }),
              "");
}

TEST(JobNamespace, DeleteEndsTheJobsProcessesAndLeavesNothing) {
    EXPECT_EQ(on_node([](Config &config) {
                  // A task that would live on.
                  int started[2];
                  CHILD_EXPECT(::pipe(started) == 0);
                  const pid_t step = ::fork();
                  if (step == 0) {
                      const std::string r = as_task(config, 9, [&] {
                          (void)!::write(started[1], "x", 1);
                          ::pause();
                          return std::string();
                      });
                      ::_exit(r.empty() ? 0 : 1);
                  }
                  char c = 0;
                  CHILD_EXPECT(::read(started[0], &c, 1) == 1);
                  const auto paths = sjail::job_paths(config.state_dir, 9);
                  CHILD_EXPECT(::access(paths.ready.c_str(), F_OK) == 0);
                  CHILD_EXPECT(sjail::delete_job_namespace(config, 9).ok());
                  int status = 0;
                  CHILD_EXPECT(::waitpid(step, &status, 0) == step);
                  // The task was killed (its step reports the child died).
                  CHILD_EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 1);
                  CHILD_EXPECT(::access(paths.dir.c_str(), F_OK) != 0);
                  CHILD_EXPECT(kit::mounts_below(sjail::jobs_dir(config.state_dir)).empty());
                  // Deleting again, or a job never seen, is fine.
                  CHILD_EXPECT(sjail::delete_job_namespace(config, 9).ok());
                  CHILD_EXPECT(sjail::delete_job_namespace(config, 12345).ok());
                  return std::string();
              }),
              "");
}

// The job's init killed under it (by hand, or by the OOM killer): its next
// step fails with one line that says so and what to do, and the job's
// leftovers (namespace files, state) go. A step into the dead PID namespace
// would fail with "fork: Cannot allocate memory", which names nothing.
TEST(JobNamespace, AStepAfterTheJobsInitWasKilledFailsWithOneLineAndTheLeftoversGo) {
    EXPECT_EQ(on_node([](Config &config) {
                  constexpr std::uint32_t kJob = 21;
                  CHILD_EXPECT(as_task(config, kJob, [] { return std::string(); }).empty());
                  const auto paths = sjail::job_paths(config.state_dir, kJob);
                  const pid_t init = std::stoi(kit::read_file(paths.init));
                  CHILD_EXPECT(::kill(init, SIGKILL) == 0);
                  // Until it is reaped, a killed process is a zombie in /proc.
                  for (int i = 0; i < 50; ++i) {
                      const std::string stat =
                          kit::read_file("/proc/" + std::to_string(init) + "/stat");
                      if (stat.empty() || stat.find(") Z ") != std::string::npos) {
                          break;
                      }
                      std::this_thread::sleep_for(std::chrono::milliseconds(100));
                  }
                  const std::string r = as_task(config, kJob, [] { return std::string(); });
                  CHILD_EXPECT(r.find("step: job 21 ended on this node before this step: its "
                                      "init (pid " +
                                      std::to_string(init) + ")") == 0);
                  CHILD_EXPECT(r.find("Requeue or resubmit the job") != std::string::npos);
                  CHILD_EXPECT(r.find("Cannot allocate memory") == std::string::npos);
                  CHILD_EXPECT(::access(paths.dir.c_str(), F_OK) != 0);
                  CHILD_EXPECT(kit::mounts_below(sjail::jobs_dir(config.state_dir)).empty());
                  return std::string();
              }),
              "");
}

TEST(JobNamespace, StaleJobsAreDeletedLiveOnesKept) {
    EXPECT_EQ(on_node([](Config &config) {
                  // Job 3: made, then its step is gone (as after slurmstepd was killed).
                  CHILD_EXPECT(as_task(config, 3, [] { return std::string(); }).empty());
                  // Job 4: a task still runs.
                  int started[2];
                  CHILD_EXPECT(::pipe(started) == 0);
                  const pid_t step = ::fork();
                  if (step == 0) {
                      (void)as_task(config, 4, [&] {
                          (void)!::write(started[1], "x", 1);
                          ::pause();
                          return std::string();
                      });
                      ::_exit(0);
                  }
                  char c = 0;
                  CHILD_EXPECT(::read(started[0], &c, 1) == 1);
                  const auto deleted = sjail::delete_stale_jobs(config);
                  CHILD_EXPECT(deleted == std::vector<std::uint32_t>{3});
                  CHILD_EXPECT(
                      ::access(sjail::job_paths(config.state_dir, 4).ready.c_str(), F_OK) == 0);
                  CHILD_EXPECT(sjail::delete_job_namespace(config, 4).ok());
                  ::waitpid(step, nullptr, 0);
                  return std::string();
              }),
              "");
}

TEST(JobNamespace, JobTmpOnADirectoryIsRemovedSafely) {
    EXPECT_EQ(on_node([](Config &config) {
                  config.job_tmp = sjail::JobTmp::Directory;
                  config.job_tmp_dir = "/mnt/node/jobtmp";
                  const std::string in_job = as_task(config, 5, [] {
                      CHILD_EXPECT(::mkdir("/tmp/deep", 0755) == 0);
                      CHILD_EXPECT(kit::write_file("/tmp/deep/f", "x").empty());
                      // A link to a node file: removed, never followed.
                      CHILD_EXPECT(::symlink("/mnt/host-only", "/tmp/deep/l") == 0);
                      return std::string();
                  });
                  if (!in_job.empty()) {
                      return in_job;
                  }
                  CHILD_EXPECT(kit::read_file("/mnt/node/jobtmp/job-5/deep/f") == "x");
                  CHILD_EXPECT(sjail::delete_job_namespace(config, 5).ok());
                  CHILD_EXPECT(!std::filesystem::exists("/mnt/node/jobtmp/job-5"));
                  CHILD_EXPECT(kit::read_file("/mnt/host-only") == "host");
                  return std::string();
              }),
              "");
}

TEST(JobNamespace, EachJobHasItsOwnSmallRunLock) {
    EXPECT_EQ(on_node([](Config &config) {
                  CHILD_EXPECT(as_task(config, 21, [] {
                                   struct statfs fs {};
                                   CHILD_EXPECT(::statfs("/run/lock", &fs) == 0 &&
                                                fs.f_type == TMPFS_MAGIC && fs.f_files == 1024);
                                   struct stat st {};
                                   CHILD_EXPECT(::stat("/run/lock", &st) == 0 &&
                                                (st.st_mode & 07777) == 01777 && st.st_uid == 0);
                                   return kit::write_file("/run/lock/mine", "job21");
                               }).empty());
                  CHILD_EXPECT(as_task(config, 21, [] {
                                   CHILD_EXPECT(kit::read_file("/run/lock/mine") == "job21");
                                   return std::string();
                               }).empty());
                  CHILD_EXPECT(as_task(config, 22, [] {
                                   CHILD_EXPECT(::access("/run/lock/mine", F_OK) != 0);
                                   return std::string();
                               }).empty());
                  return std::string();
              }),
              "");
}

TEST(JobNamespace, AJobTmpDirectoryLeftWithoutItsJobGoesAtTheNextStart) {
    EXPECT_EQ(on_node([](Config &config) {
                  config.job_tmp = sjail::JobTmp::Directory;
                  config.job_tmp_dir = "/mnt/node/jobtmp";
                  // As a crash leaves it: the user's files, no state of job 77.
                  const std::string left = "/mnt/node/jobtmp/job-77";
                  CHILD_EXPECT(kit::mkdir_p(left + "/a/b", 0755).empty());
                  CHILD_EXPECT(kit::write_file(left + "/a/b/f", "x").empty());
                  CHILD_EXPECT(::symlink("/mnt", (left + "/a/link").c_str()) == 0);
                  CHILD_EXPECT(kit::mkdir_p(left + "/closed", 0755).empty());
                  CHILD_EXPECT(kit::write_file(left + "/closed/f", "y").empty());
                  CHILD_EXPECT(::chown((left + "/a/b/f").c_str(), kNobody, kNobody) == 0);
                  CHILD_EXPECT(::chown((left + "/closed").c_str(), kNobody, kNobody) == 0);
                  CHILD_EXPECT(::chmod((left + "/closed").c_str(), 0) == 0);
                  // Not a job's directory: left alone.
                  CHILD_EXPECT(kit::mkdir_p("/mnt/node/jobtmp/other", 0755).empty());
                  const auto deleted = sjail::delete_stale_jobs(config);
                  CHILD_EXPECT(deleted == std::vector<std::uint32_t>{77});
                  CHILD_EXPECT(!std::filesystem::exists(left));
                  CHILD_EXPECT(std::filesystem::exists("/mnt/node/jobtmp/other"));
                  CHILD_EXPECT(kit::read_file("/mnt/host-only") == "host");
                  return std::string();
              }),
              "");
}

namespace {

// A stand-in for a slurmstepd of `job`'s extern step, as ps shows one.
// A process titled as the job's extern slurmstepd, running as `uid`;
// returned once it has its title (exec closed the pipe).
pid_t fake_extern_stepd(std::uint32_t job, uid_t uid = 0) {
    int exec_done[2];
    if (::pipe2(exec_done, O_CLOEXEC) != 0) {
        return -1;
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
        const std::string name = "slurmstepd: [" + std::to_string(job) + ".extern]";
        if (uid == 0 || ::setresuid(uid, uid, uid) == 0) {
            ::execl("/bin/sleep", name.c_str(), "600", nullptr);
        }
        ::_exit(127);
    }
    ::close(exec_done[1]);
    char c = 0;
    (void)!::read(exec_done[0], &c, 1);
    ::close(exec_done[0]);
    return pid;
}

} // namespace

// Only root's slurmstepd keeps a job whose tasks are gone: a user's process
// may call itself anything.
TEST(JobNamespace, AUsersProcessTitledAsTheJobsStepdKeepsNoStaleJob) {
    EXPECT_EQ(on_node([](Config &config) {
                  constexpr std::uint32_t kJob = 987655;
                  CHILD_EXPECT(as_task(config, kJob, [] { return std::string(); }).empty());
                  const pid_t roots = fake_extern_stepd(kJob);
                  CHILD_EXPECT(roots > 0);
                  const auto kept = sjail::delete_stale_jobs(config);
                  ::kill(roots, SIGKILL);
                  ::waitpid(roots, nullptr, 0);
                  CHILD_EXPECT(std::find(kept.begin(), kept.end(), kJob) == kept.end());
                  const pid_t users = fake_extern_stepd(kJob, 65534);
                  CHILD_EXPECT(users > 0);
                  // It runs, titled as the job's stepd, as uid 65534.
                  const std::string proc = "/proc/" + std::to_string(users);
                  CHILD_EXPECT(sjail::stepd_of_cmdline(kit::read_file(proc + "/cmdline")) ==
                               (sjail::StepdOf{kJob, true}));
                  CHILD_EXPECT(sjail::real_uid_of_status(kit::read_file(proc + "/status")) ==
                               65534U);
                  const auto deleted = sjail::delete_stale_jobs(config);
                  ::kill(users, SIGKILL);
                  ::waitpid(users, nullptr, 0);
                  CHILD_EXPECT(std::find(deleted.begin(), deleted.end(), kJob) != deleted.end());
                  return std::string();
              }),
              "");
}

TEST(JobNamespace, AnInitWhoseJobIsGoneFromTheNodeDeletesItAndEnds) {
    EXPECT_EQ(
        on_node([](Config &config) {
            // A job id no real cluster on the machine is near.
            constexpr std::uint32_t kJob = 987654;
            const pid_t stepd = fake_extern_stepd(kJob);
            CHILD_EXPECT(stepd > 0);
            const auto paths = sjail::job_paths(config.state_dir, kJob);
            CHILD_EXPECT(as_task(config, kJob, [] { return std::string(); }).empty());
            const std::string init_line = kit::read_file(paths.init);
            const pid_t init = std::stoi(init_line);
            // While its extern step runs, the job stays.
            std::this_thread::sleep_for(sjail::JobWatch::kContainedGrace + std::chrono::seconds(3));
            CHILD_EXPECT(::access(paths.ready.c_str(), F_OK) == 0);
            CHILD_EXPECT(::kill(init, 0) == 0);
            // The job ends, and nobody deletes it.
            ::kill(stepd, SIGKILL);
            ::waitpid(stepd, nullptr, 0);
            const auto deadline = std::chrono::steady_clock::now() +
                                  sjail::JobWatch::kContainedGrace + std::chrono::seconds(20);
            while (::access(paths.dir.c_str(), F_OK) == 0 &&
                   std::chrono::steady_clock::now() < deadline) {
                std::this_thread::sleep_for(std::chrono::milliseconds(200));
            }
            CHILD_EXPECT(::access(paths.dir.c_str(), F_OK) != 0);
            CHILD_EXPECT(kit::mounts_below(sjail::jobs_dir(config.state_dir)).empty());
            // The init has exited: a zombie (nobody here reaps what
            // it was reparented to) or gone (or its pid reused).
            std::this_thread::sleep_for(std::chrono::seconds(1));
            const std::string stat = kit::read_file("/proc/" + std::to_string(init) + "/stat");
            const auto now = sjail::start_time_of_stat(stat);
            const bool zombie = stat.find(") Z ") != std::string::npos;
            CHILD_EXPECT(zombie || !now ||
                         init_line.find(" " + std::to_string(*now) + "\n") == std::string::npos);
            return std::string();
        }),
        "");
}

TEST(JobNamespace, NodeWideTmpWhenAsked) {
    EXPECT_EQ(on_node([](Config &config) {
                  config.job_tmp = sjail::JobTmp::Node;
                  CHILD_EXPECT(as_task(config, 6, [] {
                                   return kit::write_file("/tmp/shared", "node");
                               }).empty());
                  CHILD_EXPECT(kit::read_file("/mnt/node/tmp/shared") == "node");
                  return std::string();
              }),
              "");
}

TEST(JobNamespace, ProcOptionsFromTheSetting) {
    EXPECT_EQ(on_node([](Config &config) {
                  config.proc_options = "hidepid=invisible,gid=5";
                  return as_task(config, 8, [] {
                      const std::string options = super_options_of("/proc");
                      CHILD_EXPECT(options.find("hidepid=invisible") != std::string::npos);
                      CHILD_EXPECT(options.find("gid=5") != std::string::npos);
                      return std::string();
                  });
              }),
              "");
}

// A later step of a running job is as fresh as a new job: when the node's
// jail namespace was rebuilt (here: a bind= removed, proc= changed), the
// job's views are made anew, keeping its processes, /tmp and /dev/shm.
TEST(JobNamespace, ALaterStepOfARunningJobFollowsTheNodeAndKeepsTheJob) {
    EXPECT_EQ(on_node([](Config &config) {
                  int started[2];
                  CHILD_EXPECT(::pipe(started) == 0);
                  const pid_t step = ::fork();
                  if (step == 0) {
                      const std::string r = as_task(config, 12, [&] {
                          CHILD_EXPECT(kit::read_file("/opt/data/hello") == "hi");
                          CHILD_EXPECT(kit::write_file("/tmp/keep", "job12").empty());
                          CHILD_EXPECT(kit::write_file("/dev/shm/keep", "shm12").empty());
                          (void)!::write(started[1], "x", 1);
                          ::pause();
                          return std::string();
                      });
                      ::_exit(r.empty() ? 0 : 1);
                  }
                  char c = 0;
                  CHILD_EXPECT(::read(started[0], &c, 1) == 1);
                  const auto paths = sjail::job_paths(config.state_dir, 12);
                  struct stat before {};
                  CHILD_EXPECT(::stat(paths.pid_ns.c_str(), &before) == 0);
                  config.binds.clear();
                  config.proc_options = "hidepid=invisible";
                  const std::string later = as_task(config, 12, [] {
                      CHILD_EXPECT(::access("/opt/data/hello", F_OK) != 0);
                      CHILD_EXPECT(kit::read_file("/tmp/keep") == "job12");
                      CHILD_EXPECT(kit::read_file("/dev/shm/keep") == "shm12");
                      CHILD_EXPECT(kit::read_file("/proc/1/comm") == "sjail-job-init\n");
                      CHILD_EXPECT(pids_in_proc().size() == 3); // init, the first task, this one
                      CHILD_EXPECT(super_options_of("/proc").find("hidepid=invisible") !=
                                   std::string::npos);
                      return std::string();
                  });
                  if (!later.empty()) {
                      return "the later step: " + later;
                  }
                  struct stat after {};
                  CHILD_EXPECT(::stat(paths.pid_ns.c_str(), &after) == 0);
                  CHILD_EXPECT(after.st_ino == before.st_ino);
                  // Unchanged since: the views are reused as they are.
                  struct stat tasks {};
                  CHILD_EXPECT(::stat(paths.tasks_ns.c_str(), &tasks) == 0);
                  CHILD_EXPECT(as_task(config, 12, [] { return std::string(); }).empty());
                  struct stat again {};
                  CHILD_EXPECT(::stat(paths.tasks_ns.c_str(), &again) == 0);
                  CHILD_EXPECT(again.st_ino == tasks.st_ino);
                  CHILD_EXPECT(sjail::delete_job_namespace(config, 12).ok());
                  CHILD_EXPECT(::waitpid(step, nullptr, 0) == step);
                  CHILD_EXPECT(kit::mounts_below(sjail::jobs_dir(config.state_dir)).empty());
                  return std::string();
              }),
              "");
}

TEST(JobNamespace, AJobTmpDirectoryUsersControlIsRefused) {
    EXPECT_EQ(on_node([](Config &config) {
                  config.job_tmp = sjail::JobTmp::Directory;
                  config.job_tmp_dir = "/mnt/node/usertmp/jobs";
                  std::filesystem::create_directories("/mnt/node/usertmp");
                  CHILD_EXPECT(::chown("/mnt/node/usertmp", 1000, 1000) == 0);
                  sjail::NodeNamespace node;
                  CHILD_EXPECT(sjail::acquire_node_namespace(config, node).ok());
                  sjail::JobNamespace job;
                  const auto s = sjail::open_job_namespace(config, node, 10, job);
                  CHILD_EXPECT(!s.ok());
                  CHILD_EXPECT(s.message().find("job_tmp= directory") != std::string::npos);
                  CHILD_EXPECT(s.message().find("/mnt/node/usertmp") != std::string::npos);
                  return std::string();
              }),
              "");
}

// slurmd makes the namespaces of jobs that start at once from several
// threads; each creator child is forked while the others' pipes are open.
// None may hold another's pipes (each would wait for the other until the
// deadline).
TEST(JobNamespace, JobsStartingAtOnceFromThreadsAreMadeInTime) {
    EXPECT_EQ(on_node([](Config &config) {
                  config.build_timeout_s = 10;
                  sjail::NodeNamespace node;
                  CHILD_EXPECT(sjail::acquire_node_namespace(config, node).ok());
                  constexpr int kJobs = 16;
                  std::vector<std::string> errors(kJobs);
                  std::vector<std::thread> threads;
                  for (int i = 0; i < kJobs; ++i) {
                      threads.emplace_back([&config, &node, &errors, i] {
                          sjail::JobNamespace job;
                          const auto s = sjail::open_job_namespace(
                              config, node, static_cast<std::uint32_t>(100 + i), job);
                          errors[static_cast<std::size_t>(i)] = s.ok() ? "" : s.message();
                      });
                  }
                  for (auto &t : threads) {
                      t.join();
                  }
                  // A creator stuck on another's pipe is killed at the
                  // deadline: its job fails with "did not finish within".
                  for (const auto &e : errors) {
                      CHILD_EXPECT(e.empty());
                  }
                  return std::string();
              }),
              "");
}

namespace {

// How many processes are in session `session` (field 6 of /proc/PID/stat).
int processes_in_session(pid_t session) {
    int count = 0;
    for (const auto &pid : pids_in_proc()) {
        const std::string stat = kit::read_file("/proc/" + pid + "/stat");
        const std::size_t after_name = stat.rfind(')');
        if (after_name == std::string::npos) {
            continue; // gone meanwhile
        }
        std::istringstream fields(stat.substr(after_name + 1));
        std::string state;
        long ppid = 0;
        long pgrp = 0;
        long sid = 0;
        if (fields >> state >> ppid >> pgrp >> sid && sid == session) {
            ++count;
        }
    }
    return count;
}

} // namespace

// A creator killed at its deadline (a hung jail filesystem) takes the init
// it forked with it: nothing of a failed attempt stays on the node.
TEST(JobNamespace, AnAttemptPastItsDeadlineLeavesNoInit) {
    // The attempts run in a session of their own, so that what they leave
    // is told apart from other tests' jobs running meanwhile.
    const std::string result = on_node([](Config &config) {
        const pid_t session = ::setsid();
        CHILD_EXPECT(session > 0);
        sjail::NodeNamespace node;
        CHILD_EXPECT(sjail::acquire_node_namespace(config, node).ok());
        config.build_timeout_s = 0; // the deadline is now: every attempt is too late
        for (std::uint32_t job = 200; job < 220; ++job) {
            sjail::JobNamespace ns;
            CHILD_EXPECT(!sjail::open_job_namespace(config, node, job, ns).ok());
        }
        return "session " + std::to_string(session);
    });
    ASSERT_TRUE(result.starts_with("session ")) << result;
    const pid_t session = std::stoi(result.substr(8));
    // Killed processes leave once reaped; a loaded machine may take seconds.
    int left = processes_in_session(session);
    for (int i = 0; i < 500 && left > 0; ++i) {
        ::usleep(20000);
        left = processes_in_session(session);
    }
    EXPECT_EQ(left, 0);
}
