// Entering the prepared jail namespace, per step and per task.
#pragma once

#include "status.hpp"

#include <string_view>
#include <sys/types.h>

namespace sjail {

// Moves the calling thread into the mount namespace `ns_fd` (its root and cwd
// become the jail's). Works in a multithreaded process: the thread first
// unshares its filesystem attributes (CLONE_FS), then calls setns.
Status enter_namespace(int ns_fd);

// The inode of the mount namespace the calling thread is in.
Status current_mount_namespace(ino_t &ino);

// Pure: true when slurmstepd evidently fell back to /tmp because the job's
// working directory does not exist in the jail. Slurm gives plugins no way to
// read the requested directory, so this reads it from the submit directory:
// a task in /tmp whose job was submitted elsewhere fell back.
bool working_dir_fell_back(std::string_view cwd, std::string_view submit_dir);

} // namespace sjail
