#include "step_entry.hpp"

#include <cerrno>
#include <cstring>
#include <sched.h>
#include <string>
#include <sys/stat.h>

namespace sjail {

Status enter_namespace(int ns_fd) {
    if (::unshare(CLONE_FS) != 0) {
        return Status::failure(std::string("unshare(CLONE_FS): ") + std::strerror(errno));
    }
    if (::setns(ns_fd, CLONE_NEWNS) != 0) {
        return Status::failure(std::string("setns into the node's jail namespace: ") +
                               std::strerror(errno) +
                               " (slurmd needs CAP_SYS_ADMIN and "
                               "CAP_SYS_CHROOT)");
    }
    return {};
}

Status current_mount_namespace(ino_t &ino) {
    struct stat st {};
    if (::stat("/proc/thread-self/ns/mnt", &st) != 0) {
        return Status::failure(std::string("stat /proc/thread-self/ns/mnt: ") +
                               std::strerror(errno));
    }
    ino = st.st_ino;
    return {};
}

bool working_dir_fell_back(std::string_view cwd, std::string_view submit_dir) {
    return cwd == "/tmp" && !submit_dir.empty() && submit_dir != "/tmp";
}

} // namespace sjail
