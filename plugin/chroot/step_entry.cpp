#include "step_entry.hpp"

#include "jail_view.hpp"
#include "node_namespace.hpp"

#include <sched.h>
#include <sys/stat.h>

namespace sjail {

Status enter_node_jail(const Config &config) {
    NodeNamespace node;
    if (auto s = acquire_node_namespace(config, node); !s.ok()) {
        return s;
    }
    if (auto s = enter_namespace(node.fd.get()); !s.ok()) {
        return s;
    }
    if (auto s = verify_root(node.jail); !s.ok()) {
        forget_node_namespace(config);
        return s;
    }
    return {};
}

Status enter_namespace(int ns_fd) {
    if (::unshare(CLONE_FS) != 0) {
        return Status::from_errno("unshare(CLONE_FS)");
    }
    if (::setns(ns_fd, CLONE_NEWNS) != 0) {
        return Status::from_errno("setns into the node's jail namespace (slurmd needs "
                                  "CAP_SYS_ADMIN and CAP_SYS_CHROOT)");
    }
    return {};
}

Status verify_root(const FileId &jail) {
    struct stat st {};
    if (::stat("/", &st) != 0) {
        return Status::from_errno("stat / in the jail namespace");
    }
    if (!(file_id_of(st) == jail)) {
        return Status::failure("the node's kept jail namespace does not have the jail as its "
                               "root; it was dropped and the next step rebuilds it");
    }
    return {};
}

Status current_mount_namespace(ino_t &ino) {
    struct stat st {};
    if (::stat("/proc/thread-self/ns/mnt", &st) != 0) {
        return Status::from_errno("stat /proc/thread-self/ns/mnt");
    }
    ino = st.st_ino;
    return {};
}

} // namespace sjail
