// SPDX-License-Identifier: Apache-2.0
#include "samples.hpp"

#include "kit/child.hpp"
#include "kit/files.hpp"
#include "sjail/core/parse_config.hpp"
#include "sjail/sys/job/job_namespace.hpp"
#include "sjail/sys/job/step_entry.hpp"
#include "sjail/sys/node/jail_view.hpp"
#include "sjail/sys/node/node_namespace.hpp"
#include "sjail/sys/node/node_stamp.hpp"
#include "sjail/sys/state_dir.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <ctime>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

namespace bench {
namespace {

// The job every JobEntry sample enters; made before a batch of samples and
// deleted after it (job_entry_batch).
constexpr std::uint32_t kBenchJob = 7;

std::int64_t now_ns() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// Runs `body` in a forked child that sends 'K' + values or 'E' + a message.
template <typename Body> std::string in_child(Body body, std::vector<std::int64_t> &values) {
    const kit::ChildReport report = kit::run_child([&body]() -> std::string {
        std::vector<std::int64_t> got;
        std::string error;
        try {
            error = body(got);
        } catch (const std::exception &ex) {
            error = ex.what();
        }
        // Built by append: GCC 12 at -O2 warns (-Wrestrict, wrongly) on
        // "K" + std::string&& inlined here.
        std::string out(1, error.empty() ? 'K' : 'E');
        if (!error.empty()) {
            return out.append(error);
        }
        return out.append(reinterpret_cast<const char *>(got.data()),
                          got.size() * sizeof(std::int64_t));
    });
    const std::string &msg = report.text;
    if (msg.empty() || (msg[0] != 'K' && msg[0] != 'E')) {
        return "sample child died (wait status " + std::to_string(report.wait_status) + ")";
    }
    if (msg[0] == 'E') {
        return msg.substr(1);
    }
    const std::size_t n = (msg.size() - 1) / sizeof(std::int64_t);
    const std::size_t old = values.size();
    values.resize(old + n);
    std::memcpy(values.data() + old, msg.data() + 1, n * sizeof(std::int64_t));
    return "";
}

// Writes the 64 KiB of stack below the caller's frame.
__attribute__((noinline)) void touch_stack() {
    constexpr std::size_t kDepth = std::size_t{64} * 1024;
    std::array<char, kDepth> below{};
    for (std::size_t i = 0; i < kDepth; i += 4096) {
        static_cast<volatile char &>(below.at(i)) = 1;
    }
}

// In a sample's fresh child, before anything is timed: the child is made
// like slurmstepd is when the step's callbacks run. chroot.so has parsed its
// plugstack.conf line (slurm_spank_init), so the C++ runtime has been used;
// and slurmstepd's stack has been through its startup, so its pages are
// its own (a forked child would otherwise copy each page it first writes,
// a cost of the fork, not of the step). Samples use the config parsed here.
sjail::Config parsed_in_child(const JailConfig &jc) {
    touch_stack();
    return sjail::parse_config(jc.args).config;
}

// The floor of every entry, timed: setns into the node namespace `ns_fd`
// (enter), then what task_init_privileged checks per task (check); checked
// afterwards, untimed, that the caller is in the jail.
std::string enter_and_check(int ns_fd, std::int64_t &enter, std::int64_t &check) {
    const std::int64_t t0 = now_ns();
    const sjail::Status entered = sjail::enter_namespace(ns_fd);
    const std::int64_t t1 = now_ns();
    if (!entered.ok()) {
        return "enter: " + entered.message();
    }
    ino_t ino = 0;
    const sjail::Status current = sjail::current_mount_namespace(ino);
    char cwd[4096];
    const bool have_cwd = ::getcwd(cwd, sizeof(cwd)) != nullptr;
    const std::int64_t t2 = now_ns();
    struct stat st {};
    if (!current.ok() || ::fstat(ns_fd, &st) != 0 || st.st_ino != ino) {
        return "the task is not in the node namespace";
    }
    if (!have_cwd) {
        return "getcwd failed inside the jail";
    }
    if (auto e = check_inside_jail(); !e.empty()) {
        return e;
    }
    enter = t1 - t0;
    check = t2 - t1;
    return "";
}

// What slurmstepd does per step (acquire: through the node watch when it is
// armed, else the stamp check over every source; setns; the check that / is
// the jail) and per task (the namespace and cwd checks of
// task_init_privileged), timed in one child; and whether the watch was used.
std::string entry_sample(const JailConfig &jc, std::vector<std::int64_t> &values) {
    return in_child(
        [&jc](std::vector<std::int64_t> &got) -> std::string {
            const sjail::Config config = parsed_in_child(jc);
            sjail::NodeNamespace ns;
            const std::int64_t t0 = now_ns();
            const sjail::Status acquired = sjail::acquire_node_namespace(config, ns);
            const std::int64_t t1 = now_ns();
            if (!acquired.ok()) {
                return "acquire: " + acquired.message();
            }
            std::int64_t enter = 0;
            std::int64_t check = 0;
            if (auto e = enter_and_check(ns.fd.get(), enter, check); !e.empty()) {
                return e;
            }
            got = {t1 - t0, enter, check, ns.watched ? 1 : 0};
            return "";
        },
        values);
}

// The floor of a step's entry, in a fresh child as entry_sample's: setns
// into the kept namespace and the task check, nothing else.
std::string floor_sample(const JailConfig &jc, std::vector<std::int64_t> &values) {
    return in_child(
        [&jc](std::vector<std::int64_t> &got) -> std::string {
            const sjail::Config config = parsed_in_child(jc);
            sjail::Fd ns;
            sjail::open_kept_namespace(config.state_dir, ns);
            if (!ns.valid()) {
                return "no kept namespace in " + config.state_dir;
            }
            std::int64_t enter = 0;
            std::int64_t check = 0;
            if (auto e = enter_and_check(ns.get(), enter, check); !e.empty()) {
                return e;
            }
            got = {enter, check};
            return "";
        },
        values);
}

// What slurmstepd and a task do per step and task with per-job namespaces.
std::string job_entry_sample(const JailConfig &jc, std::vector<std::int64_t> &values) {
    return in_child(
        [&jc](std::vector<std::int64_t> &got) -> std::string {
            const sjail::Config config = parsed_in_child(jc);
            sjail::StepJail step;
            const std::int64_t t0 = now_ns();
            const sjail::Status entered = sjail::enter_job_for_step(config, kBenchJob, step);
            const std::int64_t t1 = now_ns();
            if (!entered.ok()) {
                return "enter_job_for_step: " + entered.message();
            }
            const sjail::Status pid = sjail::start_children_in_job(step);
            const std::int64_t t2 = now_ns();
            if (!pid.ok()) {
                return "start_children_in_job: " + pid.message();
            }
            std::vector<std::int64_t> task;
            const std::string task_error = in_child(
                [&step](std::vector<std::int64_t> &t) -> std::string {
                    const std::int64_t a = now_ns();
                    const sjail::Status s =
                        sjail::enter_tasks_view(step, sjail::PidCheck::Required);
                    char cwd[4096];
                    const bool have_cwd = ::getcwd(cwd, sizeof(cwd)) != nullptr;
                    const std::int64_t b = now_ns();
                    if (!s.ok()) {
                        return "enter_tasks_view: " + s.message();
                    }
                    if (!have_cwd || ::getpid() == 1) {
                        return "the task has no cwd in the job's view";
                    }
                    if (auto outside = check_inside_jail(); !outside.empty()) {
                        return outside;
                    }
                    t = {b - a};
                    return "";
                },
                task);
            sjail::stop_children_in_job(step);
            if (!task_error.empty()) {
                return "task: " + task_error;
            }
            got = {t1 - t0, t2 - t1, task.at(0)};
            return "";
        },
        values);
}

// A new job's namespaces made, then deleted, in the node process.
std::string job_make_sample(const JailConfig &jc, std::vector<std::int64_t> &values) {
    static std::uint32_t next_job = 1000;
    const std::uint32_t job = next_job++;
    sjail::NodeNamespace node;
    if (auto s = sjail::acquire_node_namespace(jc.config, node); !s.ok()) {
        return "acquire: " + s.message();
    }
    sjail::JobNamespace job_ns;
    const std::int64_t t0 = now_ns();
    const sjail::Status made = sjail::open_job_namespace(jc.config, node, job, job_ns);
    const std::int64_t t1 = now_ns();
    job_ns = {};
    const sjail::Status deleted = sjail::delete_job_namespace(jc.config, job);
    const std::int64_t t2 = now_ns();
    if (!made.ok()) {
        return "open_job_namespace: " + made.message();
    }
    if (!deleted.ok()) {
        return "delete_job_namespace: " + deleted.message();
    }
    values.push_back(t1 - t0);
    values.push_back(t2 - t1);
    return "";
}

// The replaced design: a fresh namespace per task, copying the host's table.
std::string fresh_sample(const JailConfig &jc, std::vector<std::int64_t> &values) {
    return in_child(
        [&jc](std::vector<std::int64_t> &got) -> std::string {
            const std::int64_t t0 = now_ns();
            if (::unshare(CLONE_NEWNS) != 0) {
                return kit::errno_text("unshare");
            }
            sjail::FileId root;
            const sjail::Status built = sjail::build_jail_view(jc.config, jc.plan, root);
            const std::int64_t t1 = now_ns();
            if (!built.ok()) {
                return "build_jail_view: " + built.message();
            }
            if (auto e = check_inside_jail(); !e.empty()) {
                return e;
            }
            got = {t1 - t0};
            return "";
        },
        values);
}

// The per-step stamp check: what acquire_node_namespace computes before it
// compares with STATE/stamp.
std::string stamp_sample(const JailConfig &jc, std::vector<std::int64_t> &values) {
    return in_child(
        [&jc](std::vector<std::int64_t> &got) -> std::string {
            const sjail::Config config = parsed_in_child(jc);
            sjail::CurrentStamp current;
            const std::int64_t t0 = now_ns();
            const sjail::Status s = sjail::current_stamp(config, current);
            const std::int64_t t1 = now_ns();
            if (!s.ok()) {
                return "current_stamp: " + s.message();
            }
            // Every bind source of the plan was identified (one "source" line each).
            std::size_t sources = 0;
            for (std::size_t at = 0;
                 (at = current.stamp.find("\nsource ", at)) != std::string::npos; ++at) {
                ++sources;
            }
            // The fresh /proc and /run have no source.
            const auto with_source = static_cast<std::size_t>(
                std::count_if(jc.plan.begin(), jc.plan.end(),
                              [](const sjail::MountOp &op) { return !op.source.empty(); }));
            if (sources != with_source) {
                return "the stamp names " + std::to_string(sources) + " sources, the plan has " +
                       std::to_string(with_source);
            }
            got = {t1 - t0};
            return "";
        },
        values);
}

// A node-namespace rebuild, as after a config change.
std::string build_sample(const JailConfig &jc, std::vector<std::int64_t> &values) {
    const std::string stamp = jc.config.state_dir + "/stamp";
    if (::unlink(stamp.c_str()) != 0) {
        return kit::errno_text("unlink " + stamp);
    }
    sjail::NodeNamespace ns;
    const std::int64_t t0 = now_ns();
    const sjail::Status s = sjail::acquire_node_namespace(jc.config, ns);
    const std::int64_t t1 = now_ns();
    if (!s.ok()) {
        return "rebuild: " + s.message();
    }
    values.push_back(t1 - t0);
    return "";
}

} // namespace

std::string job_entry_batch(const JailConfig &jc, bool start) {
    if (!start) {
        const sjail::Status s = sjail::delete_job_namespace(jc.config, kBenchJob);
        return s.ok() ? "" : "deleting the job's namespaces: " + s.message();
    }
    sjail::NodeNamespace node;
    sjail::JobNamespace job;
    sjail::Status s = sjail::acquire_node_namespace(jc.config, node);
    if (s.ok()) {
        s = sjail::open_job_namespace(jc.config, node, kBenchJob, job);
    }
    return s.ok() ? "" : "making the job's namespaces: " + s.message();
}

std::string take_sample(Op op, const JailConfig &jc, std::vector<std::int64_t> &values) {
    switch (op) {
    case Op::Entry:
        return entry_sample(jc, values);
    case Op::Build:
        return build_sample(jc, values);
    case Op::Fresh:
        return fresh_sample(jc, values);
    case Op::Floor:
        return floor_sample(jc, values);
    case Op::Stamp:
        return stamp_sample(jc, values);
    case Op::JobEntry:
        return job_entry_sample(jc, values);
    case Op::JobMake:
        return job_make_sample(jc, values);
    }
    return "unknown request";
}

} // namespace bench
