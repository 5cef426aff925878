// SPDX-License-Identifier: Apache-2.0
#include "client.hpp"

#include "plugin_state.hpp"

#include "sjail/core/job/step_decision.hpp"

#include <cstdlib>
#include <unistd.h>

namespace chroot_plugin {

namespace {

// How Slurm passes a SPANK option on to the job's environment.
constexpr const char *kOptOutEnv = "_SLURM_SPANK_OPTION_chroot_no_jail";

int on_no_jail(int /*val*/, const char * /*optarg*/, int /*remote*/) {
    plugin.no_jail_requested = true;
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

} // namespace

void register_no_jail_option(spank_t sp) {
    if (spank_option_register(sp, &no_jail_option) != ESPANK_SUCCESS) {
        slurm_error("chroot: cannot register --no-jail");
    }
}

int check_client_opt_out() {
    const bool by_env = std::getenv(kOptOutEnv) != nullptr;
    if ((plugin.no_jail_requested || by_env) && !opt_out_allowed(::getuid())) {
        slurm_error("chroot: %s", sjail::opt_out_refusal(::getuid()).c_str());
        return -1;
    }
    return 0;
}

} // namespace chroot_plugin
