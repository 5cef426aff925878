// SPDX-License-Identifier: Apache-2.0
// chroot.so: SPANK glue. Dispatches by SPANK context; the work lives in the
// other files of this directory (config parsing, step decision, mount plan,
// node namespace, step entry, dead end).
//
//   slurmd       init: delete what crashed jobs left, start the node watch
//                (node_watch.hpp), build the node's jail namespace early, in
//                the background; slurmd_exit: drop both.
//   srun/sbatch  init: refuse a broken plugstack line; register --no-jail and
//                refuse it (as option or environment variable) for users the
//                admin did not allow.
//   slurmstepd   init_post_opt: move slurmstepd's own thread into the job's
//                tasks view of the jail (job_namespace.hpp; the job's
//                namespaces are made by its first step on the node), so it
//                opens -i/-o/-e files and chdirs inside the jail, with only
//                the job's processes in /proc. If it may not, or cannot, the
//                thread goes to the dead end (dead_end.hpp) instead, so
//                nothing Slurm does next for the step touches the host, even
//                when the plugin is marked optional. The extern step enters
//                too.
//                user_init .. first task_post_fork: the window in which
//                slurmstepd forks the tasks; its children are born in the
//                job's PID namespace then, and only then (step_entry.hpp).
//                The extern step has no user_init: its window opens at the
//                end of init_post_opt. At the first task_post_fork the
//                thread moves on to the job's stepd view: the node's /proc
//                (Slurm reads its tasks there by host PID), nothing
//                executable. A task epilog it forks later runs only through
//                job_container/slurm_jail, which moves it into the tasks view
//                and has it born again in the job's PID namespace.
//                task_init_privileged: move the task into the tasks' view
//                (the job's own /proc) or refuse to start it. Errors are
//                returned as -1: Slurm 22.05 runs the task anyway on a
//                positive return code.
//   job epilog   job_epilog: the job ended on the node: delete its namespaces
//                (with the settings passed to this call: no init runs there).
//   job_container/slurm_jail (plugin/job_container) reaches the job
//                functions below through the one table this plugin exports
//                for it (sjail/abi/job_container_table.h).
// No exception leaves a callback.
extern "C" {
#include <slurm/slurm.h> // SLURM_BATCH_SCRIPT, SLURM_EXTERN_CONT, ...
#include <slurm/spank.h>
extern const char plugin_name[];
extern const char plugin_type[];
extern const unsigned int plugin_version;
extern const unsigned int spank_plugin_version;
SPANK_PLUGIN(chroot, 1)
}

#include "sjail/abi/job_container_table.h"
#include "sjail/core/config.hpp"
#include "sjail/core/path_rules.hpp"
#include "sjail/core/step_decision.hpp"
#include "sjail/core/step_state.hpp"
#include "sjail/sys/dead_end.hpp"
#include "sjail/sys/job_namespace.hpp"
#include "sjail/sys/node_namespace.hpp"
#include "sjail/sys/node_stamp.hpp"
#include "sjail/sys/node_watch.hpp"
#include "sjail/sys/step_entry.hpp"

#include <csignal>
#include <cstdlib>
#include <pwd.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace {

using sjail::Status;

constexpr const char *kOptOutEnv = "_SLURM_SPANK_OPTION_chroot_no_jail";

struct PluginState {
    sjail::Config config;
    Status config_status;
    bool no_jail_requested = false; // --no-jail, by option or environment
    sjail::StepState state;         // where the step stands (step_state.hpp)
    sjail::StepJail step;           // the job's tasks view, for tasks and job scripts
    std::string step_name = "step";
    spank_context_t context = S_CTX_ERROR;
    const char *munge_dir = "/run/munge"; // for the dead end (no allocation there)
    // The slurmd spool, for the dead end too.
    const char *spool_dir = "/var/spool/slurmd";
    sjail::NodeWatch node_watch; // slurmd: its queues, for its life (node_watch.hpp)
};

PluginState g;

int on_no_jail(int /*val*/, const char * /*optarg*/, int /*remote*/) {
    g.no_jail_requested = true;
    return 0;
}

struct spank_option no_jail_option = {
    const_cast<char *>("no-jail"),
    nullptr,
    const_cast<char *>("[chroot] run this job on the node's own root instead of the shared "
                       "jail (only for users listed in allow_opt_out=)"),
    0,
    0,
    on_no_jail};

std::vector<std::string> args_of(int ac, char **av) {
    std::vector<std::string> args;
    args.reserve(static_cast<std::size_t>(ac > 0 ? ac : 0));
    for (int i = 0; i < ac; ++i) {
        args.emplace_back(av[i]);
    }
    return args;
}

// Looked up on the node's own files, before the thread enters the jail.
std::string user_name(uid_t uid) {
    struct passwd pw {};
    struct passwd *found = nullptr;
    std::vector<char> buf(4096);
    if (::getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) == 0 && found != nullptr) {
        return found->pw_name;
    }
    return "";
}

bool opt_out_allowed(uid_t uid) {
    return sjail::opt_out_allowed(g.config, user_name(uid), uid);
}

std::string describe_step(spank_t sp) {
    uint32_t job = 0;
    uint32_t step = 0;
    if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS) {
        return "step";
    }
    std::string name = "StepId=" + std::to_string(job) + ".";
    switch (step) {
    case SLURM_BATCH_SCRIPT:
        return name + "batch";
    case SLURM_EXTERN_CONT:
        return name + "extern";
    case SLURM_INTERACTIVE_STEP:
        return name + "interactive";
    default:
        return name + std::to_string(step);
    }
}

std::string job_env(spank_t sp, const char *name) {
    char value[4096];
    if (spank_getenv(sp, name, value, sizeof(value)) == ESPANK_SUCCESS) {
        return value;
    }
    return "";
}

// The thread leaves every view of the node. If even that is impossible, the
// step must not go on: slurmstepd is stopped.
void leave_for_dead_end() noexcept {
    if (!sjail::enter_dead_end(g.munge_dir, g.spool_dir)) {
        slurm_error("chroot: cannot leave the node's root for the dead end; stopping slurmstepd "
                    "so that nothing of the step runs on the host");
        ::kill(::getpid(), SIGKILL);
    }
}

// Allocation-free: also reached when memory ran out.
void fail_out_of_memory() noexcept {
    g.state.ran_out_of_memory();
    slurm_error("chroot: out of memory while preparing the step; no task will run");
    leave_for_dead_end();
}

void fail_step(std::string reason) {
    g.state.refuse(std::move(reason));
    slurm_error("chroot: %s: jail entry failed, no task will run: %s", g.step_name.c_str(),
                g.state.refusal().c_str());
    leave_for_dead_end();
}

// slurmstepd, main thread, before it opens output files and forks tasks.
void prepare_step(spank_t sp) {
    uint32_t job = 0;
    uid_t uid = 0;
    g.step_name = describe_step(sp);
    (void)spank_get_item(sp, S_JOB_UID, &uid);
    sjail::StepFacts facts;
    facts.config = g.config_status;
    facts.no_jail_requested = g.no_jail_requested;
    facts.opt_out_allowed = g.no_jail_requested && opt_out_allowed(uid);
    facts.uid = static_cast<unsigned>(uid);
    const sjail::StepDecision decision = sjail::decide_step(facts);
    switch (decision.action) {
    case sjail::StepAction::NodeRoot:
        g.state.run_on_node_root();
        slurm_info("chroot: %s: %s", g.step_name.c_str(), decision.reason.c_str());
        return;
    case sjail::StepAction::Refuse:
        fail_step(decision.reason);
        return;
    case sjail::StepAction::Enter:
        break;
    }
    if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS) {
        fail_step("slurmstepd gave no job id");
        return;
    }
    if (Status s = sjail::enter_job_for_step(g.config, job, g.step); !s.ok()) {
        fail_step(s.message());
        return;
    }
    g.state.entered();
    // The extern step forks its one process (which pam_slurm_adopt adopts
    // into) without a user_init before it: its fork window opens here and
    // closes at its task_post_fork.
    uint32_t step = 0;
    if (spank_get_item(sp, S_JOB_STEPID, &step) == ESPANK_SUCCESS && step == SLURM_EXTERN_CONT) {
        if (Status s = sjail::start_children_in_job(g.step); !s.ok()) {
            fail_step("the extern step's process cannot start in the job's PID namespace: " +
                      s.message());
        }
    }
}

// Task child, as root, before setuid and exec. Returns -1 to stop the task.
void report_task_refused() {
    slurm_error("chroot: %s", g.state.task_refusal(g.step_name).c_str());
}

int check_task(spank_t sp) {
    switch (g.state.for_task()) {
    case sjail::TaskVerdict::RunWhereItIs:
        return 0;
    case sjail::TaskVerdict::Refuse:
        report_task_refused();
        return -1;
    case sjail::TaskVerdict::EnterJail:
        break;
    }
    if (Status s = sjail::enter_tasks_view(g.step, sjail::PidCheck::Required); !s.ok()) {
        slurm_error("chroot: %s: task not started: %s", g.step_name.c_str(), s.message().c_str());
        return -1;
    }
    char cwd[4096];
    const std::string submit_dir = job_env(sp, "SLURM_SUBMIT_DIR");
    if (::getcwd(cwd, sizeof(cwd)) == nullptr || sjail::working_dir_fell_back(cwd, submit_dir)) {
        slurm_error("chroot: %s: task not started: the job's working directory does not exist "
                    "inside the jail %s (submitted from %s); create it there or pass --chdir "
                    "to a directory that exists in the jail",
                    g.step_name.c_str(), g.config.jail.c_str(), submit_dir.c_str());
        return -1;
    }
    return 0;
}

// srun/sbatch/salloc: refuse a --no-jail the node would refuse, at once.
int check_client_opt_out() {
    const bool by_env = std::getenv(kOptOutEnv) != nullptr;
    if ((g.no_jail_requested || by_env) && !opt_out_allowed(::getuid())) {
        slurm_error("chroot: %s", sjail::opt_out_refusal(::getuid()).c_str());
        return -1;
    }
    return 0;
}

// Builds the node namespace at slurmd start without delaying it: a detached
// grandchild does the work (the builder inside it has its own deadline).
void prebuild_in_background() {
    const pid_t child = ::fork();
    if (child == 0) {
        if (::fork() == 0) {
            try {
                sjail::NodeNamespace node;
                if (Status s = sjail::acquire_node_namespace(g.config, node); !s.ok()) {
                    slurm_error("chroot: cannot prepare the jail namespace, jobs will fail "
                                "until fixed: %s",
                                s.message().c_str());
                } else {
                    slurm_info("chroot: jail namespace ready for %s", g.config.jail.c_str());
                }
            } catch (...) {
                slurm_error("chroot: preparing the jail namespace ran out of memory");
            }
            ::_exit(0);
        }
        ::_exit(0);
    }
    int status = 0;
    while (child > 0 && ::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
}

// slurmd's queues of changes to what steps check, so that a step joins
// without checking every bind source again while nothing changed.
void watch_node() {
    if (Status s = g.node_watch.start(g.config); !s.ok()) {
        slurm_info("chroot: every step checks the node's bind sources in full (no node watch: "
                   "%s)",
                   s.message().c_str());
    } else {
        slurm_info("chroot: watching the node's bind sources and mounts for its steps");
    }
}

// After slurmd or slurmstepd was killed: the namespaces of jobs that have no
// process left on the node go.
void delete_stale_jobs() {
    for (const auto job : sjail::delete_stale_jobs(g.config)) {
        slurm_info("chroot: deleted the namespaces of job %u, which has nothing left on this node",
                   job);
    }
}

// The job ended on this node (SPANK's job epilog, or job_container).
int delete_job(uint32_t job) {
    std::string left_behind;
    if (Status s = sjail::delete_job_namespace(g.config, job, &left_behind); !s.ok()) {
        slurm_error("chroot: job %u: deleting its namespaces: %s", job, s.message().c_str());
        return -1;
    }
    if (!left_behind.empty()) {
        slurm_info("chroot: job %u: its job_tmp= directory is left for the next cleanup "
                   "(slurmd's start): %s",
                   job, left_behind.c_str());
    }
    return 0;
}

// ---- for job_container/slurm_jail ----

// In a child of slurmd (a file broadcast): into the job's tasks view.
// slurmd read plugstack.conf when it started: its settings may be older than
// the steps'. A job's namespaces made by its first step are joined as they
// are; slurmd makes them only for a request that comes before any step.
Status join_from_slurmd(uint32_t job) {
    sjail::JobNamespace job_ns;
    sjail::FileId jail;
    if (!sjail::open_existing_job_namespace(g.config, job, job_ns)) {
        sjail::NodeNamespace node;
        if (Status s = sjail::acquire_node_namespace(g.config, node); !s.ok()) {
            return s;
        }
        if (Status s = sjail::open_job_namespace(g.config, node, job, job_ns); !s.ok()) {
            return s;
        }
        jail = node.jail;
    } else {
        sjail::JailFilesystem filesystem(g.config);
        sjail::Fd root;
        if (Status s = sjail::find_jail(g.config, filesystem, jail, root); !s.ok()) {
            return s;
        }
    }
    if (Status s = sjail::enter_namespace(job_ns.tasks.get()); !s.ok()) {
        return s;
    }
    return sjail::verify_root(jail);
}

// In a child of slurmd or slurmstepd: into the job's tasks view, or, when
// that fails, into the dead end (Slurm ignores a failed join for scripts).
int join_job(uint32_t job) {
    if (!g.config_status.ok()) {
        slurm_error("chroot: job %u: %s", job, g.config_status.message().c_str());
        leave_for_dead_end();
        return -1;
    }
    Status s;
    if (g.context == S_CTX_REMOTE) {
        switch (g.state.for_task()) {
        case sjail::TaskVerdict::RunWhereItIs:
            return 0; // an allowed --no-jail step: its scripts run where it runs
        case sjail::TaskVerdict::Refuse:
            // The same line the task refusal gives: slurmstepd joins the
            // job's container in each task before SPANK's task callbacks.
            report_task_refused();
            leave_for_dead_end();
            return -1;
        case sjail::TaskVerdict::EnterJail:
            break;
        }
        s = sjail::enter_tasks_view(g.step, sjail::PidCheck::RebirthIfNeeded);
    } else {
        s = join_from_slurmd(job);
    }
    if (!s.ok()) {
        slurm_error("chroot: job %u: joining the job's view failed: %s", job, s.message().c_str());
        leave_for_dead_end();
        return -1;
    }
    return 0;
}

int init(spank_t sp, int ac, char **av) {
    auto parsed = sjail::parse_config(args_of(ac, av));
    g.config = parsed.config;
    g.config_status = parsed.status;
    if (sjail::check_absolute_path("munge", g.config.munge_dir).ok()) {
        g.munge_dir = g.config.munge_dir.c_str();
    }
    if (sjail::check_absolute_path("spool", g.config.spool_dir).ok()) {
        g.spool_dir = g.config.spool_dir.c_str();
    }
    const spank_context_t ctx = spank_context();
    g.context = ctx;
    const bool client = ctx == S_CTX_LOCAL || ctx == S_CTX_ALLOCATOR;
    if (client || ctx == S_CTX_REMOTE) {
        if (spank_option_register(sp, &no_jail_option) != ESPANK_SUCCESS) {
            slurm_error("chroot: cannot register --no-jail");
        }
    }
    if (!g.config_status.ok()) {
        slurm_error("chroot: %s", g.config_status.message().c_str());
        // srun/sbatch refuse at once; slurmstepd fails the step (init_post_opt).
        return client ? -1 : 0;
    }
    if (ctx == S_CTX_SLURMD) {
        delete_stale_jobs();
        watch_node();
        prebuild_in_background();
    }
    return 0;
}

} // namespace

extern "C" {

int slurm_spank_init(spank_t sp, int ac, char **av) {
    try {
        return init(sp, ac, av);
    } catch (...) {
        slurm_error("chroot: init failed: out of memory");
        return -1;
    }
}

int slurm_spank_init_post_opt(spank_t sp, int /*ac*/, char ** /*av*/) {
    try {
        if (spank_remote(sp) == 1) {
            prepare_step(sp); // a failure leaves the thread in the dead end
            return 0;
        }
        return check_client_opt_out();
    } catch (...) {
        if (spank_remote(sp) == 1) {
            fail_out_of_memory();
        }
        return -1;
    }
}

// slurmstepd, main thread, as the user, just before it forks the tasks.
int slurm_spank_user_init(spank_t /*sp*/, int /*ac*/, char ** /*av*/) {
    try {
        if (!g.state.in_jail()) {
            return 0; // refused steps: their tasks are refused one by one
        }
        if (Status s = sjail::start_children_in_job(g.step); !s.ok()) {
            slurm_error("chroot: %s: tasks will not start: %s", g.step_name.c_str(),
                        s.message().c_str());
            return -1;
        }
        return 0;
    } catch (...) {
        return -1;
    }
}

// slurmstepd, main thread, after each task was forked: the fork window is
// over at the first one, and the thread moves on to the stepd view.
int slurm_spank_task_post_fork(spank_t /*sp*/, int /*ac*/, char ** /*av*/) {
    sjail::stop_children_in_job(g.step);
    if (g.state.in_jail()) {
        if (Status s = sjail::move_on_to_stepd_view(g.step); !s.ok()) {
            slurm_error("chroot: %s: %s", g.step_name.c_str(), s.message().c_str());
            leave_for_dead_end();
        }
    }
    return 0;
}

int slurm_spank_exit(spank_t /*sp*/, int /*ac*/, char ** /*av*/) {
    sjail::stop_children_in_job(g.step);
    return 0;
}

int slurm_spank_task_init_privileged(spank_t sp, int /*ac*/, char ** /*av*/) {
    try {
        return check_task(sp);
    } catch (...) {
        slurm_error("chroot: task not started: out of memory");
        return -1;
    }
}

int slurm_spank_job_epilog(spank_t sp, int ac, char **av) {
    try {
        // slurmstepd's job epilog process calls no slurm_spank_init: the
        // settings (state=, job_tmp=DIR, ...) come with this call, and
        // deleting with the defaults would miss a job_tmp= directory or a
        // state= directory elsewhere.
        auto parsed = sjail::parse_config(args_of(ac, av));
        uint32_t job = 0;
        if (!parsed.status.ok()) {
            slurm_error("chroot: job epilog: %s", parsed.status.message().c_str());
            return 0; // as every step of such a node failed, nothing was made
        }
        g.config = parsed.config;
        if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS) {
            return 0;
        }
        return delete_job(job);
    } catch (...) {
        slurm_error("chroot: job epilog ran out of memory");
        return -1;
    }
}

int slurm_spank_slurmd_exit(spank_t /*sp*/, int /*ac*/, char ** /*av*/) {
    try {
        if (g.config_status.ok()) {
            g.node_watch.stop(g.config);
            if (Status s = sjail::release_node_namespace(g.config); !s.ok()) {
                slurm_error("chroot: %s", s.message().c_str());
            }
        }
    } catch (...) {
        slurm_error("chroot: releasing the jail namespace ran out of memory");
    }
    return 0;
}

// For job_container/slurm_jail, which Slurm loads beside this plugin: the
// one table it reaches this plugin through (sjail/abi/job_container_table.h).

namespace {

int jc_join(uint32_t job) {
    try {
        return join_job(job);
    } catch (...) {
        fail_out_of_memory();
        return -1;
    }
}

// An fd of the job's tasks view for pam_slurm_adopt (slurmstepd of the
// extern step); the same fd every time, as slurmstepd does not close it.
int jc_join_external(uint32_t /*job*/) {
    return g.state.in_jail() ? g.step.tasks.get() : -1;
}

int jc_remove(uint32_t job) {
    try {
        return g.config_status.ok() ? delete_job(job) : -1;
    } catch (...) {
        slurm_error("chroot: job %u: out of memory deleting its namespaces", job);
        return -1;
    }
}

int jc_restore() {
    try {
        if (g.config_status.ok()) {
            delete_stale_jobs();
        }
        return 0;
    } catch (...) {
        return -1;
    }
}

constexpr sjail_job_container_calls kJobContainerTable = {
    SJAIL_JOB_CONTAINER_TABLE_VERSION,
    sizeof(sjail_job_container_calls),
    jc_join,
    jc_join_external,
    jc_remove,
    jc_restore,
};

} // namespace

__attribute__((visibility("default"))) const sjail_job_container_calls *
sjail_job_container_table() {
    return &kJobContainerTable;
}

} // extern "C"
