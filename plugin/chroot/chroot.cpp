// chroot.so: SPANK glue. Dispatches by SPANK context; the work lives in the
// other files of this directory (config parsing, step decision, mount plan,
// node namespace, step entry, dead end).
//
//   slurmd       init: build the node's jail namespace early, in the
//                background; slurmd_exit: drop it.
//   srun/sbatch  init: refuse a broken plugstack line; register --no-jail and
//                refuse it (as option or environment variable) for users the
//                admin did not allow.
//   slurmstepd   init_post_opt: move slurmstepd's own thread into the jail
//                (so it opens -o/-e files, chdirs and runs task prolog and
//                epilog scripts inside the jail). If it may not, or cannot,
//                the thread goes to the dead end (dead_end.hpp) instead, so
//                nothing Slurm does next for the step touches the host, even
//                when the plugin is marked optional.
//                task_init_privileged: refuse to start the task unless it is
//                inside the jail. Errors are returned as -1: Slurm 22.05 runs
//                the task anyway on a positive return code.
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

#include "config.hpp"
#include "dead_end.hpp"
#include "node_namespace.hpp"
#include "path_rules.hpp"
#include "step_decision.hpp"
#include "step_entry.hpp"

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
    bool skip = false;              // the step runs where it is (extern step, allowed opt-out)
    bool entered = false;           // slurmstepd's thread is in the jail
    bool out_of_memory = false;     // a failure whose message could not be kept
    std::string failure;            // why this step may not run
    ino_t jail_ns = 0;              // the namespace tasks must be in
    std::string step_name = "step";
    const char *munge_dir = "/run/munge"; // for the dead end (no allocation there)
    // The slurmd spool, for the dead end too.
    const char *spool_dir = "/var/spool/slurmd";
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
    g.out_of_memory = true;
    g.entered = false;
    slurm_error("chroot: out of memory while preparing the step; no task will run");
    leave_for_dead_end();
}

void fail_step(std::string reason) {
    g.failure = std::move(reason);
    g.entered = false;
    slurm_error("chroot: %s: jail entry failed, no task will run: %s", g.step_name.c_str(),
                g.failure.c_str());
    leave_for_dead_end();
}

// slurmstepd, main thread, before it opens output files and forks tasks.
void prepare_step(spank_t sp) {
    uint32_t step = 0;
    uid_t uid = 0;
    g.step_name = describe_step(sp);
    (void)spank_get_item(sp, S_JOB_STEPID, &step);
    (void)spank_get_item(sp, S_JOB_UID, &uid);
    sjail::StepFacts facts;
    facts.extern_step = step == SLURM_EXTERN_CONT;
    facts.config = g.config_status;
    facts.no_jail_requested = g.no_jail_requested;
    facts.opt_out_allowed = g.no_jail_requested && opt_out_allowed(uid);
    facts.uid = static_cast<unsigned>(uid);
    const sjail::StepDecision decision = sjail::decide_step(facts);
    switch (decision.action) {
    case sjail::StepAction::Unjailed:
    case sjail::StepAction::NodeRoot:
        g.skip = true;
        slurm_info("chroot: %s: %s", g.step_name.c_str(), decision.reason.c_str());
        return;
    case sjail::StepAction::Refuse:
        fail_step(decision.reason);
        return;
    case sjail::StepAction::Enter:
        break;
    }
    if (Status s = sjail::enter_node_jail(g.config); !s.ok()) {
        fail_step(s.message());
        return;
    }
    if (Status s = sjail::current_mount_namespace(g.jail_ns); !s.ok()) {
        fail_step(s.message());
        return;
    }
    g.entered = true;
}

// Task child, as root, before setuid and exec. Returns -1 to stop the task.
int check_task(spank_t sp) {
    if (g.skip) {
        return 0;
    }
    if (!g.entered) {
        if (g.out_of_memory) {
            slurm_error("chroot: task not started: the step ran out of memory entering the jail");
        } else {
            slurm_error("chroot: %s: task not started, jail entry failed: %s", g.step_name.c_str(),
                        g.failure.c_str());
        }
        return -1;
    }
    ino_t ns = 0;
    if (Status s = sjail::current_mount_namespace(ns); !s.ok() || ns != g.jail_ns) {
        slurm_error("chroot: %s: task not started: it is not inside the jail namespace",
                    g.step_name.c_str());
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

int slurm_spank_task_init_privileged(spank_t sp, int /*ac*/, char ** /*av*/) {
    try {
        return check_task(sp);
    } catch (...) {
        slurm_error("chroot: task not started: out of memory");
        return -1;
    }
}

int slurm_spank_slurmd_exit(spank_t /*sp*/, int /*ac*/, char ** /*av*/) {
    try {
        if (g.config_status.ok()) {
            if (Status s = sjail::release_node_namespace(g.config); !s.ok()) {
                slurm_error("chroot: %s", s.message().c_str());
            }
        }
    } catch (...) {
        slurm_error("chroot: releasing the jail namespace ran out of memory");
    }
    return 0;
}

} // extern "C"
