// SPDX-License-Identifier: Apache-2.0
#include "bench_env.hpp"

#include "kit/child.hpp"
#include "kit/files.hpp"
#include "kit/jail_skeleton.hpp"
#include "kit/node.hpp"
#include "sjail/core/config.hpp"
#include "sjail/core/job/step_decision.hpp"
#include "sjail/core/node/mount_plan.hpp"
#include "sjail/core/parse_config.hpp"
#include "sjail/sys/job/job_namespace.hpp"
#include "sjail/sys/job/step_entry.hpp"
#include "sjail/sys/node/jail_view.hpp"
#include "sjail/sys/node/node_namespace.hpp"
#include "sjail/sys/node/node_stamp.hpp"
#include "sjail/sys/node/node_watch.hpp"
#include "sjail/sys/state_dir.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace bench {
namespace {

// Everything lives below this directory, on a tmpfs mounted in the node's
// private namespace only; the host's own /mnt is never touched.
constexpr const char *kBase = "/mnt";
constexpr const char *kRelease = "JAIL-BENCH\n";
// The job every JobEntry sample enters; made before a batch of samples and
// deleted after it (job_entry_batch).
constexpr std::uint32_t kBenchJob = 7;

std::int64_t now_ns() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

struct JailConfig {
    int binds = 0;
    std::vector<std::string> args; // the plugstack.conf line's arguments
    sjail::Config config;
    std::vector<sjail::MountOp> plan;
    sjail::NodeWatch watch; // what slurmd holds (node_watch.hpp), held by the node process
};

const std::string base = kBase;
const std::string jail_dir = base + "/jail";
const std::string node_dir = base + "/node";
const std::string host_mounts_dir = base + "/hostmounts";

std::string make_config(int binds, JailConfig &out) {
    std::vector<std::string> args = {"jail=" + jail_dir,
                                     "munge=" + node_dir + "/munge",
                                     "conf_dir=" + node_dir + "/conf",
                                     "spool=" + node_dir + "/spool",
                                     "tmp=" + node_dir + "/tmp",
                                     "state=" + base + "/state-b" + std::to_string(binds)};
    for (int i = 0; i < binds; ++i) {
        const std::string name = "/b" + std::to_string(i);
        // Every other bind read-only, as admins mix both.
        args.push_back("bind=" + node_dir + "/binds" + name + ":/opt" + name +
                       (i % 2 == 1 ? ":ro" : ""));
    }
    auto parsed = sjail::parse_config(args);
    if (!parsed.status.ok()) {
        return "config: " + parsed.status.message();
    }
    out.binds = binds;
    out.args = args;
    out.config = parsed.config;
    out.plan = sjail::build_mount_plan(out.config);
    return "";
}

// The node's directories and a jail skeleton with the mount points of the
// widest config's plan.
std::string make_layout(int max_binds) {
    for (const std::string dir : {"/munge", "/conf", "/spool", "/binds"}) {
        if (auto e = kit::mkdir_p(node_dir + dir, 0755); !e.empty()) {
            return e;
        }
    }
    for (int i = 0; i < max_binds; ++i) {
        const std::string name = node_dir + "/binds/b" + std::to_string(i);
        if (auto e = kit::mkdir_p(name, 0755); !e.empty()) {
            return e;
        }
    }
    if (auto e = kit::write_file(node_dir + "/conf/slurm.conf", "ClusterName=bench\n");
        !e.empty()) {
        return e;
    }
    JailConfig widest;
    if (auto e = make_config(max_binds, widest); !e.empty()) {
        return e;
    }
    return kit::make_jail_skeleton(jail_dir, widest.plan, kRelease);
}

// Small tmpfs mounts, as autofs/Lustre/overlay mounts would be on a real node.
std::string add_host_mounts(int count) {
    if (auto e = kit::mkdir_p(host_mounts_dir, 0755); !e.empty()) {
        return e;
    }
    for (int i = 0; i < count; ++i) {
        const std::string dir = host_mounts_dir + "/m" + std::to_string(i);
        if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
            return kit::errno_text("mkdir " + dir);
        }
        if (::mount("sjail-bench-host", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV,
                    "size=4k,nr_inodes=16,mode=0755") != 0) {
            return kit::errno_text("mount tmpfs on " + dir);
        }
    }
    return "";
}

std::string setup(int host_mounts, const std::vector<int> &binds, std::vector<JailConfig> &out,
                  int &actual, std::string &no_watch) {
    // Private: nothing mounted here reaches the host, and nothing the host
    // mounts meanwhile changes the node's mount count.
    if (auto e = kit::private_node_namespace("sjail-bench", kit::HostMounts::Private); !e.empty()) {
        return e;
    }
    // Shared, as mounts are on systemd hosts, so the copies a builder makes
    // join peer groups just as they would on a real node.
    if (::mount(nullptr, kBase, nullptr, MS_SHARED, nullptr) != 0) {
        return kit::errno_text(std::string("make ") + kBase + " shared");
    }
    const int max_binds = binds.empty() ? 0 : *std::max_element(binds.begin(), binds.end());
    if (auto e = make_layout(max_binds); !e.empty()) {
        return e;
    }
    // Each prepared config adds two mounts: its state directory's self-bind
    // and the nsfs bind that keeps its namespace. (A job's namespaces add
    // three more while job entries are sampled: a node with one job.)
    const int missing = host_mounts - static_cast<int>(kit::mount_points().size()) -
                        2 * static_cast<int>(binds.size());
    if (auto e = add_host_mounts(std::max(missing, 0)); !e.empty()) {
        return e;
    }
    for (const int b : binds) {
        JailConfig jc;
        if (auto e = make_config(b, jc); !e.empty()) {
            return e;
        }
        if (auto s = jc.watch.start(jc.config); !s.ok()) {
            no_watch = s.message(); // steps then check fully, as on a kernel before 6.15
        }
        sjail::NodeNamespace ns;
        if (auto s = sjail::acquire_node_namespace(jc.config, ns); !s.ok()) {
            return "building the node namespace (" + std::to_string(b) + " binds): " + s.message();
        }
        out.push_back(std::move(jc));
    }
    actual = static_cast<int>(kit::mount_points().size());
    return "";
}

// Checks, outside the timed part, that the calling process sees the jail.
std::string check_inside_jail() {
    std::ifstream in("/etc/slurm-jail-release");
    std::string line;
    std::getline(in, line);
    if (line + "\n" != kRelease) {
        return "not inside the jail: /etc/slurm-jail-release says '" + line + "'";
    }
    if (::access(host_mounts_dir.c_str(), F_OK) == 0) {
        return "the host's mounts are visible inside the jail";
    }
    return "";
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
        if (!error.empty()) {
            return "E" + error;
        }
        return "K" + std::string(reinterpret_cast<const char *>(got.data()),
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

// Around a batch of JobEntry samples: the job's namespaces are made
// (start = true), as by its first step, or deleted.
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

struct Request {
    std::uint32_t op = 0;
    std::uint32_t binds = 0;
    std::uint32_t count = 0;
};

bool send_reply(int sock, const std::string &error, const std::vector<std::int64_t> &values) {
    const std::array<std::uint32_t, 2> head = {static_cast<std::uint32_t>(error.size()),
                                               static_cast<std::uint32_t>(values.size())};
    return kit::write_all(sock, head.data(), sizeof(head)) &&
           kit::write_all(sock, error.data(), error.size()) &&
           kit::write_all(sock, values.data(), values.size() * sizeof(std::int64_t));
}

bool read_reply(int sock, std::string &error, std::vector<std::int64_t> &values) {
    std::array<std::uint32_t, 2> head{};
    if (!kit::read_all(sock, head.data(), sizeof(head))) {
        return false;
    }
    error.assign(head[0], '\0');
    const std::size_t old = values.size();
    values.resize(old + head[1]);
    return kit::read_all(sock, error.data(), error.size()) &&
           kit::read_all(sock, values.data() + old, head[1] * sizeof(std::int64_t));
}

[[noreturn]] void serve(int sock, int host_mounts, const std::vector<int> &binds) {
    std::vector<JailConfig> configs;
    int actual = 0;
    std::string no_watch;
    std::string error = setup(host_mounts, binds, configs, actual, no_watch);
    if (error.empty() && !no_watch.empty()) {
        error = "-" + no_watch; // not an error: said after a '-'
    }
    if (!send_reply(sock, error, {actual}) || (!error.empty() && !error.starts_with('-'))) {
        ::_exit(1);
    }
    Request req;
    while (kit::read_all(sock, &req, sizeof(req))) {
        std::vector<std::int64_t> values;
        error.clear();
        const auto jc = std::find_if(configs.begin(), configs.end(), [&req](const JailConfig &c) {
            return c.binds == static_cast<int>(req.binds);
        });
        if (jc == configs.end()) {
            error = "no config with " + std::to_string(req.binds) + " binds";
        }
        const bool job_batch = error.empty() && static_cast<Op>(req.op) == Op::JobEntry;
        if (job_batch) {
            error = job_entry_batch(*jc, true);
        }
        for (std::uint32_t i = 0; error.empty() && i < req.count; ++i) {
            switch (static_cast<Op>(req.op)) {
            case Op::Entry:
                error = entry_sample(*jc, values);
                break;
            case Op::Build:
                error = build_sample(*jc, values);
                break;
            case Op::Fresh:
                error = fresh_sample(*jc, values);
                break;
            case Op::Floor:
                error = floor_sample(*jc, values);
                break;
            case Op::Stamp:
                error = stamp_sample(*jc, values);
                break;
            case Op::JobEntry:
                error = job_entry_sample(*jc, values);
                break;
            case Op::JobMake:
                error = job_make_sample(*jc, values);
                break;
            default:
                error = "unknown request";
            }
        }
        if (job_batch) {
            const std::string deleted = job_entry_batch(*jc, false);
            error = error.empty() ? deleted : error;
        }
        if (!send_reply(sock, error, values)) {
            break;
        }
    }
    // The jobs' inits live outside this process: end them. Exiting then drops
    // this namespace, and with it every mount and nsfs bind made here.
    for (const auto &jc : configs) {
        (void)sjail::delete_job_namespace(jc.config, kBenchJob);
    }
    ::_exit(0);
}

} // namespace

std::unique_ptr<Env> Env::start(int host_mounts, const std::vector<int> &binds,
                                std::string &error) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        error = kit::errno_text("socketpair");
        return nullptr;
    }
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid == 0) {
        // Keep only our end of the socket: a node holding the driver's end of
        // another node's socket would keep that node from seeing EOF.
        if (::dup2(sv[1], 3) != 3 || ::close_range(4, ~0U, 0) != 0) {
            ::_exit(1);
        }
        (void)::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) {
            ::_exit(1);
        }
        serve(3, host_mounts, binds);
    }
    ::close(sv[1]);
    if (pid < 0) {
        ::close(sv[0]);
        error = kit::errno_text("fork");
        return nullptr;
    }
    std::unique_ptr<Env> env(new Env(pid, sv[0]));
    std::vector<std::int64_t> ready;
    if (!read_reply(env->sock_, error, ready) || ready.size() != 1) {
        if (error.empty()) {
            error = "the benchmark node process died while setting up";
        }
        return nullptr;
    }
    if (error.starts_with('-')) {
        env->no_watch_ = error.substr(1);
        error.clear();
    }
    if (!error.empty()) {
        return nullptr;
    }
    env->actual_mounts_ = static_cast<int>(ready[0]);
    return env;
}

Env::~Env() {
    ::close(sock_);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
}

std::string Env::run(Op op, int binds, std::uint32_t count, std::vector<std::int64_t> &values) {
    const Request req{static_cast<std::uint32_t>(op), static_cast<std::uint32_t>(binds), count};
    if (!kit::write_all(sock_, &req, sizeof(req))) {
        return "the benchmark node process is gone";
    }
    std::string error;
    if (!read_reply(sock_, error, values)) {
        return "the benchmark node process died";
    }
    return error;
}

} // namespace bench
