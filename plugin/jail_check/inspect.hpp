// SPDX-License-Identifier: Apache-2.0
// slurm-jail-check's look at the node and the jail, with the plugin's own
// safe opens: nothing is created or changed, no symlink inside the jail is
// followed (trusted root-owned links in system paths stay inside the jail).
#pragma once

#include "finding.hpp"
#include "sjail/core/config.hpp"
#include "sjail/core/plugstack.hpp"
#include "slurm_conf.hpp"

#include <vector>

namespace sjail::check {

struct Subject {
    Config config;                            // parsed from `line` with the plugin's parser
    PluginLine line;                          // the chroot.so line
    std::string plugstack;                    // the plugstack.conf it came from ("" for --line)
    std::vector<std::string> plugstack_files; // plugstack.conf and the files it includes
    std::vector<PluginLine> plugins;          // every plugin line, in Slurm's load order
                                              // (none for --line): pyxis's are checked
    SlurmSettings slurm;
    bool have_slurm_conf = false;
};

// Every problem at once, in a stable order: the jail, its system paths, the
// mount points (with their node sources), the node's GPU driver, the state
// and tmp directories, slurm.conf, what srun inside jobs needs, what the
// jail's container runtimes need, pyxis's lines and the jail's enroot.
std::vector<Finding> inspect(const Subject &subject);

} // namespace sjail::check
