// Root-level: every way the jail or a node path can be wrong or planted must
// refuse jail entry with a clear message, and leave host and jail untouched.
#include "node_namespace.hpp"
#include "sandbox.hpp"

#include <filesystem>
#include <functional>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

using sandbox::in_child;
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
        Fd ns;
        auto s = sjail::acquire_node_namespace(config, ns);
        if (s.ok()) {
            return std::string("accepted");
        }
        // Nothing was mounted on the host view, inside the jail or over /etc.
        if (!sandbox::mounts_below("/mnt/jail").empty() || !sandbox::mounts_below("/etc").empty()) {
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
        Fd ns;
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
