// SPDX-License-Identifier: Apache-2.0
// Root-level: every way the jail or a node path can be wrong or planted must
// refuse jail entry with a clear message, and leave host and jail untouched.
#include "sandbox.hpp"
#include "sjail/core/node/jail_policy.hpp"
#include "sjail/sys/node/node_namespace.hpp"

#include <filesystem>
#include <functional>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

using kit::in_child;
using sjail::Config;
using sjail::Fd;

namespace {

// Builds the sandbox node, lets `plant` break it, then tries to prepare the
// jail. Returns "refused: <message>" or a failure description.
std::string try_with(const std::function<std::string(Config &)> &plant) {
    return in_child([&] {
        Config config;
        if (auto e = sandbox::make_node(config); !e.empty()) {
            return e;
        }
        if (auto e = plant(config); !e.empty()) {
            return "plant: " + e;
        }
        // A node in a container has mounts below /etc of its own (hosts,
        // resolv.conf, hostname): only new ones are a leak.
        const auto etc_mounts = kit::mounts_below("/etc");
        sjail::NodeNamespace ns;
        auto s = sjail::acquire_node_namespace(config, ns);
        if (s.ok()) {
            return std::string("accepted");
        }
        // Nothing was mounted on the host view, inside the jail or over /etc.
        if (!kit::mounts_below("/mnt/jail").empty() || kit::mounts_below("/etc") != etc_mounts) {
            return "a mount leaked: " + s.message();
        }
        return "refused: " + s.message();
    });
}

void expect_refused(const std::string &result, const std::string &needle) {
    EXPECT_EQ(result.rfind("refused: ", 0), 0U) << result;
    EXPECT_NE(result.find(needle), std::string::npos) << result;
}

std::string symlink_at(const std::string &target, const std::string &path) {
    std::filesystem::remove_all(path);
    return ::symlink(target.c_str(), path.c_str()) == 0 ? "" : "symlink " + path;
}

} // namespace

TEST(Attack, SandboxItselfIsAccepted) {
    EXPECT_EQ(try_with([](Config &) { return ""; }), "accepted");
}

TEST(Attack, MissingJail) {
    expect_refused(try_with([](Config &) {
                       std::filesystem::remove_all("/mnt/jail");
                       return "";
                   }),
                   "jail /mnt/jail: /mnt/jail: No such file or directory");
}

TEST(Attack, JailOwnedByAUser) {
    expect_refused(
        try_with([](Config &) { return ::chown("/mnt/jail", 1000, 1000) == 0 ? "" : "chown"; }),
        "owned by uid 1000, not root; run: chown root:root /mnt/jail");
}

TEST(Attack, JailGroupWritable) {
    expect_refused(
        try_with([](Config &) { return ::chmod("/mnt/jail", 0775) == 0 ? "" : "chmod"; }),
        "/mnt/jail is writable by group or others");
}

TEST(Attack, WorldWritableParentOfJail) {
    expect_refused(try_with([](Config &c) {
                       c.jail = "/mnt/open/jail";
                       std::filesystem::create_directory("/mnt/open");
                       std::filesystem::rename("/mnt/jail", "/mnt/open/jail");
                       return ::chmod("/mnt/open", 01777) == 0 ? "" : "chmod";
                   }),
                   "/mnt/open is writable by group or others");
}

TEST(Attack, JailPathIsASymlink) {
    expect_refused(try_with([](Config &c) {
                       c.jail = "/mnt/link";
                       return symlink_at("/mnt/jail", "/mnt/link");
                   }),
                   "/mnt/link is a symlink");
}

TEST(Attack, PlantedTmpSymlinkToHostEtc) {
    const std::string result =
        try_with([](Config &) { return symlink_at("/etc", "/mnt/jail/tmp"); });
    expect_refused(result, "jail path /tmp is a symlink");
    // The plant is left as it was; the host /etc got nothing mounted (checked in try_with).
}

TEST(Attack, BindTargetReplacedBySymlinkToHostPath) {
    expect_refused(
        try_with([](Config &) { return symlink_at("/mnt/host-only", "/mnt/jail/opt/data"); }),
        "jail path /opt/data is a symlink");
}

TEST(Attack, SymlinkInTheMiddleOfATargetPath) {
    expect_refused(try_with([](Config &) { return symlink_at("/etc", "/mnt/jail/opt"); }),
                   "jail path /opt is a symlink");
}

TEST(Attack, TargetBelowAUserOwnedDirectory) {
    expect_refused(
        try_with([](Config &) { return ::chown("/mnt/jail/opt", 1000, 1000) == 0 ? "" : "chown"; }),
        "refusing to mount /opt/data through a path users control");
}

TEST(Attack, TargetBelowAWorldWritableDirectory) {
    expect_refused(
        try_with([](Config &) { return ::chmod("/mnt/jail/opt", 01777) == 0 ? "" : "chmod"; }),
        "through a path users control: jail path /opt is writable by group or others");
}

TEST(Attack, MissingMountPointIsNeverCreated) {
    const std::string result = in_child([] {
        Config config;
        if (auto e = sandbox::make_node(config); !e.empty()) {
            return e;
        }
        std::filesystem::remove("/mnt/jail/opt/data");
        sjail::NodeNamespace ns;
        auto s = sjail::acquire_node_namespace(config, ns);
        CHILD_EXPECT(!s.ok());
        CHILD_EXPECT(s.message().find("mount point /opt/data is missing inside the jail") !=
                     std::string::npos);
        CHILD_EXPECT(!std::filesystem::exists("/mnt/jail/opt/data"));
        return std::string();
    });
    EXPECT_EQ(result, "");
}

TEST(Attack, MissingBindSource) {
    expect_refused(try_with([](Config &) {
                       std::filesystem::remove_all("/mnt/node/data");
                       return "";
                   }),
                   "bind source /mnt/node/data is missing on this node");
}

TEST(Attack, MissingMungeDirectory) {
    expect_refused(try_with([](Config &) {
                       std::filesystem::remove_all("/mnt/node/munge");
                       return "";
                   }),
                   "bind source /mnt/node/munge is missing on this node");
}

TEST(Attack, FileSourceOntoDirectoryTarget) {
    expect_refused(try_with([](Config &c) {
                       c.binds.push_back({"/mnt/host-only", "/home", false});
                       return "";
                   }),
                   "mount point /home inside the jail is not a regular file");
}

TEST(Attack, StateDirectoryOwnedByAUser) {
    expect_refused(try_with([](Config &c) {
                       c.state_dir = "/mnt/userstate/state";
                       std::filesystem::create_directory("/mnt/userstate");
                       return ::chown("/mnt/userstate", 1000, 1000) == 0 ? "" : "chown";
                   }),
                   "state directory: /mnt/userstate must be a root-owned directory");
}

TEST(Attack, StateDirectoryWritableByOthers) {
    expect_refused(try_with([](Config &c) {
                       std::filesystem::create_directory(c.state_dir);
                       return ::chmod(c.state_dir.c_str(), 0777) == 0 ? "" : "chmod";
                   }),
                   "state directory: /mnt/state is writable by group or others; run: chmod go-w "
                   "/mnt/state");
}

// A FIFO planted in the state directory must not block the step.
TEST(Attack, FifoPlantedAsTheLockFile) {
    ::alarm(10); // a hang fails the test instead of blocking the suite
    expect_refused(try_with([](Config &c) {
                       std::filesystem::create_directory(c.state_dir);
                       const std::string lock = c.state_dir + "/lock";
                       return ::mkfifo(lock.c_str(), 0600) == 0 ? "" : "mkfifo";
                   }),
                   "/mnt/state/lock (it must be a regular file; remove anything else there)");
    ::alarm(0);
}

TEST(Attack, FifoPlantedAsTheStampIsIgnoredAndReplaced) {
    ::alarm(10);
    EXPECT_EQ(try_with([](Config &c) {
                  std::filesystem::create_directory(c.state_dir);
                  const std::string stamp = c.state_dir + "/stamp";
                  return ::mkfifo(stamp.c_str(), 0600) == 0 ? "" : "mkfifo";
              }),
              "accepted");
    ::alarm(0);
}

// A bind source reached through a directory a user can write: the user could
// swap a component for a symlink to any host path, "/" included.
TEST(Attack, BindSourceThroughASymlinkInAUserDirectory) {
    expect_refused(try_with([](Config &c) {
                       std::filesystem::create_directories("/mnt/node/proj");
                       if (::chown("/mnt/node/proj", 1000, 1000) != 0) {
                           return std::string("chown");
                       }
                       c.binds.back().source = "/mnt/node/proj/data";
                       return symlink_at("/", "/mnt/node/proj/data");
                   }),
                   "/mnt/node/proj/data is a symlink below a directory users can write");
}

TEST(Attack, BindSourceWithAUserWritableMiddleComponentIsRefusedAtItsSymlink) {
    expect_refused(try_with([](Config &c) {
                       std::filesystem::create_directories("/mnt/node/open");
                       if (::chmod("/mnt/node/open", 01777) != 0) {
                           return std::string("chmod");
                       }
                       c.binds.back().source = "/mnt/node/open/link/hello";
                       return symlink_at("/mnt/host-only-dir", "/mnt/node/open/link");
                   }),
                   "/mnt/node/open/link is a symlink below a directory users can write");
}

// Links that only root can have made are how nodes are set up
// (/etc/resolv.conf -> /run/...): they are followed.
TEST(Attack, BindSourceThroughARootOwnedSymlinkIsFollowed) {
    EXPECT_EQ(try_with([](Config &c) {
                  c.binds.back().source = "/mnt/node/data-link";
                  return symlink_at("data", "/mnt/node/data-link");
              }),
              "accepted");
}

// A user's own (non-link) directory may be bound: its content is theirs anyway.
TEST(Attack, BindSourceInAUserDirectoryWithoutLinksIsAccepted) {
    EXPECT_EQ(try_with([](Config &c) {
                  std::filesystem::create_directories("/mnt/node/proj/data");
                  c.binds.back().source = "/mnt/node/proj/data";
                  return std::string(::chown("/mnt/node/proj", 1000, 1000) == 0 ? "" : "chown");
              }),
              "accepted");
}

// Root code on the node reads these from the jail (NSS, PAM, the loader).
TEST(Attack, JailSystemFileWritableByOthers) {
    expect_refused(
        try_with([](Config &) {
            if (auto e = kit::write_file("/mnt/jail/etc/nsswitch.conf", "passwd: files\n");
                !e.empty()) {
                return e;
            }
            return std::string(::chmod("/mnt/jail/etc/nsswitch.conf", 0666) == 0 ? "" : "chmod");
        }),
        "root processes on the node read /etc/nsswitch.conf from the jail");
}

TEST(Attack, JailPamModuleDirectoryOwnedByAUser) {
    const std::string dir = std::string("/mnt/jail/usr/lib/") + sjail::multiarch() + "/security";
    expect_refused(try_with([&](Config &) {
                       std::filesystem::create_directories(dir);
                       return std::string(::chown(dir.c_str(), 1000, 1000) == 0 ? "" : "chown");
                   }),
                   "/security is owned by uid 1000, not root");
}

// A merged-/usr jail: /lib is a link to usr/lib, resolved inside the jail.
TEST(Attack, JailLibLinkIsCheckedWhereItLeads) {
    expect_refused(try_with([](Config &) {
                       std::filesystem::create_directories("/mnt/jail/usr/lib");
                       if (::chmod("/mnt/jail/usr/lib", 0777) != 0) {
                           return std::string("chmod");
                       }
                       return symlink_at("usr/lib", "/mnt/jail/lib");
                   }),
                   "/lib from the jail");
}
