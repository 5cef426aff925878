// chroot.so: SPANK glue. Dispatches by SPANK context; the work lives in the
// other files of this directory (config parsing, mount plan, node namespace,
// step entry).
//
//   slurmd       init: build the node's jail namespace early; slurmd_exit: drop it.
//   srun/sbatch  init: refuse a broken plugstack line; register --no-jail.
//   slurmstepd   init_post_opt: move slurmstepd's own thread into the jail
//                (so it opens -o/-e files and chdirs inside the jail), or
//                remember why it could not.
//                task_init_privileged: refuse to start the task unless it is
//                inside the jail. Errors are returned as -1: Slurm 22.05 runs
//                the task anyway on a positive return code.
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
#include "node_namespace.hpp"
#include "step_entry.hpp"

#include <cstring>
#include <pwd.h>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

using sjail::Status;

struct PluginState {
    sjail::Config config;
    Status config_status;
    bool no_jail_requested = false; // --no-jail
    bool skip = false;              // this step is not jailed (extern step, allowed opt-out)
    std::string failure;            // why this step could not enter the jail
    ino_t jail_ns = 0;              // the namespace tasks must be in
    std::string step_name = "step";
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

std::string user_name(uid_t uid) {
    struct passwd pw {};
    struct passwd *found = nullptr;
    std::vector<char> buf(4096);
    if (::getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) == 0 && found != nullptr) {
        return found->pw_name;
    }
    return "";
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

// Opt-out check shared by the client (early, clear refusal) and slurmstepd (authoritative).
Status check_opt_out(uid_t uid) {
    if (sjail::opt_out_allowed(g.config, user_name(uid), uid)) {
        return {};
    }
    return Status::failure("--no-jail is not allowed for uid " + std::to_string(uid) +
                           "; an admin must list the user in allow_opt_out= in plugstack.conf");
}

// slurmstepd, main thread, before slurmstepd opens output files and forks tasks.
void prepare_step(spank_t sp) {
    uint32_t step = 0;
    uid_t uid = 0;
    g.step_name = describe_step(sp);
    (void)spank_get_item(sp, S_JOB_STEPID, &step);
    if (step == SLURM_EXTERN_CONT) {
        g.skip = true; // pam_slurm_adopt's step: no user task runs in it
        slurm_debug("chroot: %s: extern step is not jailed", g.step_name.c_str());
        return;
    }
    if (!g.config_status.ok()) {
        g.failure = g.config_status.message();
        return;
    }
    if (g.no_jail_requested) {
        (void)spank_get_item(sp, S_JOB_UID, &uid);
        if (Status s = check_opt_out(uid); !s.ok()) {
            g.failure = s.message();
            return;
        }
        g.skip = true;
        slurm_info("chroot: %s: --no-jail by uid %u: running on the node's root",
                   g.step_name.c_str(), static_cast<unsigned>(uid));
        return;
    }
    sjail::Fd ns;
    if (Status s = sjail::acquire_node_namespace(g.config, ns); !s.ok()) {
        g.failure = s.message();
        return;
    }
    if (Status s = sjail::enter_namespace(ns.get()); !s.ok()) {
        g.failure = s.message();
        return;
    }
    if (Status s = sjail::current_mount_namespace(g.jail_ns); !s.ok()) {
        g.failure = s.message();
    }
}

// Task child, as root, before setuid and exec. Returns -1 to stop the task.
int check_task(spank_t sp) {
    if (g.skip) {
        return 0;
    }
    if (!g.failure.empty()) {
        slurm_error("chroot: %s: task not started, jail entry failed: %s", g.step_name.c_str(),
                    g.failure.c_str());
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

} // namespace

extern "C" {

int slurm_spank_init(spank_t sp, int ac, char **av) {
    try {
        auto parsed = sjail::parse_config(args_of(ac, av));
        g.config = parsed.config;
        g.config_status = parsed.status;
        const spank_context_t ctx = spank_context();
        if (ctx == S_CTX_LOCAL || ctx == S_CTX_ALLOCATOR || ctx == S_CTX_REMOTE) {
            if (spank_option_register(sp, &no_jail_option) != ESPANK_SUCCESS) {
                slurm_error("chroot: cannot register --no-jail");
            }
        }
        if (!g.config_status.ok()) {
            slurm_error("chroot: %s", g.config_status.message().c_str());
            // srun/sbatch refuse at once; slurmstepd fails each task with the message.
            return (ctx == S_CTX_LOCAL || ctx == S_CTX_ALLOCATOR) ? -1 : 0;
        }
        if (ctx == S_CTX_SLURMD) {
            sjail::Fd ns;
            if (Status s = sjail::acquire_node_namespace(g.config, ns); !s.ok()) {
                slurm_error("chroot: cannot prepare the jail namespace, jobs will fail until "
                            "fixed: %s",
                            s.message().c_str());
            } else {
                slurm_info("chroot: jail namespace ready for %s", g.config.jail.c_str());
            }
        }
        return 0;
    } catch (...) {
        slurm_error("chroot: init failed: out of memory");
        return -1;
    }
}

int slurm_spank_init_post_opt(spank_t sp, int /*ac*/, char ** /*av*/) {
    try {
        if (spank_remote(sp) == 1) {
            prepare_step(sp);
            return 0;
        }
        if (g.no_jail_requested) {
            if (Status s = check_opt_out(::getuid()); !s.ok()) {
                slurm_error("chroot: %s", s.message().c_str());
                return -1;
            }
        }
        return 0;
    } catch (...) {
        g.failure = "out of memory while preparing the step";
        return 0;
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
        // nothing left to do at shutdown
    }
    return 0;
}

} // extern "C"
