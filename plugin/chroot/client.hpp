// SPDX-License-Identifier: Apache-2.0
// chroot.so in srun, sbatch and salloc: the --no-jail option, and refusing
// it at once for users the admin did not allow.
#pragma once

extern "C" {
#include <slurm/spank.h>
}

namespace chroot_plugin {

// Registers --no-jail. The client offers it; slurmstepd registers it too,
// to learn that the job asked for it.
void register_no_jail_option(spank_t sp);

// init_post_opt in the client: -1 (Slurm stops the command) when the job
// asks for --no-jail, by option or environment, and allow_opt_out= does
// not list the user.
int check_client_opt_out();

} // namespace chroot_plugin
