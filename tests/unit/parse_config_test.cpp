// SPDX-License-Identifier: Apache-2.0
// Reading chroot.so's plugstack.conf arguments: each key, the checks of the
// mounts they ask for against each other, and what shapes the fingerprint.
#include "sjail/core/config.hpp"
#include "sjail/core/fingerprint.hpp"
#include "sjail/core/parse_config.hpp"

#include <gtest/gtest.h>

using sjail::parse_config;

namespace {

std::string error_of(const std::vector<std::string> &args) {
    auto parsed = parse_config(args);
    EXPECT_FALSE(parsed.status.ok()) << "accepted: " << ::testing::PrintToString(args);
    return parsed.status.message();
}

} // namespace

TEST(Config, JailAloneGivesDocumentedDefaults) {
    auto parsed = parse_config({"jail=/mnt/jail"});
    ASSERT_TRUE(parsed.status.ok()) << parsed.status.message();
    const auto &c = parsed.config;
    EXPECT_EQ(c.jail, "/mnt/jail");
    EXPECT_EQ(c.munge_dir, "/run/munge");
    EXPECT_EQ(c.conf_dir, "/etc/slurm");
    EXPECT_EQ(c.spool_dir, "/var/spool/slurmd");
    EXPECT_EQ(c.tmp_dir, "/var/lib/slurm-jail/tmp");
    EXPECT_EQ(c.state_dir, "/run/slurm-jail");
    EXPECT_TRUE(c.binds.empty());
    EXPECT_TRUE(c.allow_opt_out.empty());
    EXPECT_EQ(c.build_timeout_s, 30);
    EXPECT_EQ(c.gpu, sjail::GpuMode::Auto);
    EXPECT_EQ(c.gpu_driver_root, "");
    EXPECT_EQ(c.gpu_mps_dir, "/run/nvidia-mps");
    EXPECT_EQ(c.run, sjail::RunMode::Node);
}

TEST(Config, RunModes) {
    EXPECT_EQ(parse_config({"jail=/j", "run=node"}).config.run, sjail::RunMode::Node);
    EXPECT_EQ(parse_config({"jail=/j", "run=jail"}).config.run, sjail::RunMode::Jail);
    // With the jail's own /run, a bind may replace it as a whole.
    EXPECT_TRUE(parse_config({"jail=/j", "run=jail", "bind=/srv/run:/run"}).status.ok());
}

TEST(ConfigErrors, RunModes) {
    for (const char *bad : {"run=", "run=Node", "run=tmpfs", "run=/run"}) {
        const auto error = error_of({"jail=/j", bad});
        EXPECT_NE(error.find(std::string(bad) + " is not a mode; write run=node (the default"),
                  std::string::npos)
            << error;
        EXPECT_NE(error.find("or run=jail"), std::string::npos) << error;
    }
    EXPECT_NE(error_of({"jail=/j", "run=node", "run=jail"}).find("run= is given twice"),
              std::string::npos);
}

TEST(ConfigErrors, RunNodeOwnsRunItself) {
    for (const auto &args :
         std::vector<std::vector<std::string>>{{"jail=/j", "bind=/srv/run:/run"},
                                               {"jail=/j", "munge=/run"},
                                               {"jail=/j", "spool=/run"},
                                               {"jail=/j", "gpu_mps_dir=/run"}}) {
        const auto error = error_of(args);
        EXPECT_NE(error.find("/run is where run=node mounts the node's own /run; bind below it "
                             "(such as /run/NAME), or set run=jail"),
                  std::string::npos)
            << args[1] << ": " << error;
    }
    EXPECT_TRUE(parse_config({"jail=/j", "gpu=off", "gpu_mps_dir=/run"}).status.ok());
    EXPECT_TRUE(parse_config({"jail=/j", "bind=/srv/s:/run/site"}).status.ok());
}

TEST(Config, GpuSettings) {
    for (const auto &[text, mode] :
         {std::pair{"gpu=off", sjail::GpuMode::Off}, std::pair{"gpu=auto", sjail::GpuMode::Auto},
          std::pair{"gpu=on", sjail::GpuMode::On}}) {
        auto parsed = parse_config({"jail=/j", text});
        ASSERT_TRUE(parsed.status.ok()) << parsed.status.message();
        EXPECT_EQ(parsed.config.gpu, mode) << text;
    }
    auto parsed = parse_config(
        {"jail=/j", "gpu=on", "gpu_driver_root=/run/nvidia/driver", "gpu_mps_dir=/run/mps"});
    ASSERT_TRUE(parsed.status.ok()) << parsed.status.message();
    EXPECT_EQ(parsed.config.gpu_driver_root, "/run/nvidia/driver");
    EXPECT_EQ(parsed.config.gpu_mps_dir, "/run/mps");
    EXPECT_EQ(parsed.config.gpu_mps_shm, "");
    parsed = parse_config({"jail=/j", "gpu_mps_shm=/run/nvidia/mps/shm"});
    ASSERT_TRUE(parsed.status.ok()) << parsed.status.message();
    EXPECT_EQ(parsed.config.gpu_mps_shm, "/run/nvidia/mps/shm");
}

TEST(ConfigErrors, GpuSettings) {
    for (const char *bad : {"gpu=yes", "gpu=", "gpu=ON", "gpu=1"}) {
        EXPECT_NE(
            error_of({"jail=/j", bad}).find("write gpu=auto (the default), gpu=on or gpu=off"),
            std::string::npos)
            << bad;
    }
    EXPECT_NE(error_of({"jail=/j", "gpu=on", "gpu=off"}).find("gpu= is given twice"),
              std::string::npos);
    EXPECT_NE(error_of({"jail=/j", "gpu_driver_root=run/nvidia"}).find("gpu_driver_root"),
              std::string::npos);
    EXPECT_NE(error_of({"jail=/j", "gpu_driver_root=/a", "gpu_driver_root=/b"}).find("twice"),
              std::string::npos);
    // Jobs see /tmp as their node-local scratch: the node's MPS pipes cannot be there.
    EXPECT_NE(error_of({"jail=/j", "gpu_mps_dir=/tmp/nvidia-mps"}).find("lies under /tmp"),
              std::string::npos);
    // The MPS daemon's /dev/shm is every job's on the node: not theirs, not the node's.
    for (const char *shm :
         {"gpu_mps_shm=/tmp/mps-shm", "gpu_mps_shm=/dev/shm", "gpu_mps_shm=/dev/shm/mps"}) {
        const std::string error = error_of({"jail=/j", shm});
        EXPECT_NE(error.find("/dev/shm of its own"), std::string::npos) << shm << ": " << error;
    }
    EXPECT_NE(error_of({"jail=/j", "gpu_mps_shm=run/mps"}).find("gpu_mps_shm"), std::string::npos);
}

TEST(ConfigErrors, BindsMayNotLandWhereTheDriverGoes) {
    for (const char *bind : {"bind=/opt/nv:/usr/local/nvidia", "bind=/x:/usr/local/nvidia/lib64",
                             "bind=/c:/etc/ld.so.cache", "bind=/m:/run/nvidia-mps"}) {
        EXPECT_NE(error_of({"jail=/j", bind}).find("set gpu=off"), std::string::npos) << bind;
        EXPECT_TRUE(parse_config({"jail=/j", bind, "gpu=off"}).status.ok()) << bind;
    }
    EXPECT_TRUE(parse_config({"jail=/j", "bind=/opt/nv:/usr/local/nvidia2"}).status.ok());
}

TEST(Config, BuildTimeoutInSeconds) {
    auto parsed = parse_config({"jail=/j", "build_timeout=5"});
    ASSERT_TRUE(parsed.status.ok()) << parsed.status.message();
    EXPECT_EQ(parsed.config.build_timeout_s, 5);
}

TEST(Config, RecheckInSecondsZeroAskingEveryStep) {
    EXPECT_EQ(parse_config({"jail=/j"}).config.recheck_s, 60);
    for (const auto &[text, seconds] :
         std::vector<std::pair<std::string, int>>{{"recheck=0", 0}, {"recheck=5", 5}}) {
        auto parsed = parse_config({"jail=/j", text});
        ASSERT_TRUE(parsed.status.ok()) << parsed.status.message();
        EXPECT_EQ(parsed.config.recheck_s, seconds) << text;
    }
}

TEST(ConfigErrors, RecheckOutOfRangeOrNotANumber) {
    for (const char *bad : {"recheck=3601", "recheck=1m", "recheck=", "recheck=-1"}) {
        const std::string message = error_of({"jail=/j", bad});
        EXPECT_NE(message.find("recheck=" + std::string(bad).substr(8) +
                               " is not a number of seconds from 0 to 3600"),
                  std::string::npos)
            << bad << ": " << message;
    }
    EXPECT_NE(error_of({"jail=/j", "recheck=5", "recheck=6"}).find("given twice"),
              std::string::npos);
}

TEST(ConfigErrors, BuildTimeoutOutOfRangeOrNotANumber) {
    for (const char *bad : {"build_timeout=0", "build_timeout=3601", "build_timeout=5s",
                            "build_timeout=", "build_timeout=-1"}) {
        const std::string message = error_of({"jail=/j", bad});
        EXPECT_NE(message.find("is not a number of seconds from 1 to 3600"), std::string::npos)
            << bad << ": " << message;
    }
    EXPECT_NE(error_of({"jail=/j", "build_timeout=5", "build_timeout=6"}).find("given twice"),
              std::string::npos);
}

TEST(Config, EverySettingIsRead) {
    auto parsed = parse_config({"jail=/j", "munge=/m", "conf_dir=/c", "spool=/s", "tmp=/t",
                                "state=/st", "allow_opt_out=root,1001", "bind=/a",
                                "bind=/b:/x/y:ro", "bind=/c2:/z:rw", "bind=/d:ro"});
    ASSERT_TRUE(parsed.status.ok()) << parsed.status.message();
    const auto &c = parsed.config;
    EXPECT_EQ(c.munge_dir, "/m");
    EXPECT_EQ(c.conf_dir, "/c");
    EXPECT_EQ(c.spool_dir, "/s");
    EXPECT_EQ(c.tmp_dir, "/t");
    EXPECT_EQ(c.state_dir, "/st");
    EXPECT_EQ(c.allow_opt_out, (std::vector<std::string>{"root", "1001"}));
    ASSERT_EQ(c.binds.size(), 4U);
    EXPECT_EQ(c.binds[0], (sjail::BindSpec{"/a", "/a", false}));
    EXPECT_EQ(c.binds[1], (sjail::BindSpec{"/b", "/x/y", true}));
    EXPECT_EQ(c.binds[2], (sjail::BindSpec{"/c2", "/z", false}));
    EXPECT_EQ(c.binds[3], (sjail::BindSpec{"/d", "/d", true}));
}

TEST(ConfigErrors, JailMissing) {
    EXPECT_NE(error_of({}).find("jail= is missing"), std::string::npos);
}

TEST(ConfigErrors, JailIsHostRoot) {
    EXPECT_NE(error_of({"jail=/"}).find("into the host"), std::string::npos);
}

TEST(ConfigErrors, UnknownKeyIsNeverIgnored) {
    const auto msg = error_of({"jail=/j", "jial=/x"});
    EXPECT_NE(msg.find("unknown setting 'jial'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("chroot.so(8)"), std::string::npos) << msg;
}

TEST(ConfigErrors, NotKeyValue) {
    EXPECT_NE(error_of({"jail=/j", "verbose"}).find("not key=value"), std::string::npos);
    EXPECT_NE(error_of({"=/j"}).find("not key=value"), std::string::npos);
}

TEST(ConfigErrors, RelativePath) {
    EXPECT_NE(error_of({"jail=mnt/jail"}).find("not absolute"), std::string::npos);
    EXPECT_NE(error_of({"jail=/j", "tmp=tmp"}).find("not absolute"), std::string::npos);
}

TEST(ConfigErrors, EmptyValue) {
    EXPECT_NE(error_of({"jail="}).find("empty"), std::string::npos);
}

TEST(ConfigErrors, DotDotOrTrailingSlash) {
    EXPECT_NE(error_of({"jail=/mnt/../etc"}).find("'..'"), std::string::npos);
    EXPECT_NE(error_of({"jail=/mnt//jail"}).find("empty, '.' or '..'"), std::string::npos);
    EXPECT_NE(error_of({"jail=/mnt/jail/"}).find("trailing slash"), std::string::npos);
}

TEST(ConfigErrors, RepeatedSingleValuedKey) {
    EXPECT_NE(error_of({"jail=/a", "jail=/b"}).find("given twice"), std::string::npos);
    EXPECT_NE(error_of({"jail=/a", "allow_opt_out=x", "allow_opt_out=y"}).find("given twice"),
              std::string::npos);
}

TEST(ConfigErrors, MalformedBind) {
    EXPECT_NE(error_of({"jail=/j", "bind=/a:/b:/c"}).find("SRC[:DST][:ro]"), std::string::npos);
    EXPECT_NE(error_of({"jail=/j", "bind=a"}).find("not absolute"), std::string::npos);
    EXPECT_NE(error_of({"jail=/j", "bind=/a:b"}).find("not absolute"), std::string::npos);
    EXPECT_NE(error_of({"jail=/j", "bind=/a:/"}).find("jail root"), std::string::npos);
    EXPECT_NE(error_of({"jail=/j", "bind="}).find("empty"), std::string::npos);
}

TEST(ConfigErrors, BindIntoKernelFilesystems) {
    EXPECT_NE(error_of({"jail=/j", "bind=/x:/proc/x"}).find("lies under /proc"), std::string::npos);
    EXPECT_NE(error_of({"jail=/j", "bind=/dev/nvidia0"}).find("lies under /dev"),
              std::string::npos);
    EXPECT_NE(error_of({"jail=/j", "munge=/sys/m"}).find("lies under /sys"), std::string::npos);
}

TEST(ConfigErrors, CollidingTargets) {
    EXPECT_NE(error_of({"jail=/j", "bind=/a:/opt", "bind=/b:/opt"}).find("used twice"),
              std::string::npos);
    EXPECT_NE(error_of({"jail=/j", "bind=/x:/tmp"}).find("used twice"), std::string::npos);
    EXPECT_NE(error_of({"jail=/j", "munge=/etc/slurm"}).find("must be different"),
              std::string::npos);
}

TEST(ConfigErrors, EmptyOptOutEntry) {
    EXPECT_NE(error_of({"jail=/j", "allow_opt_out=root,,x"}).find("empty entry"),
              std::string::npos);
}

TEST(ConfigErrors, MessageNamesPlugstack) {
    EXPECT_EQ(error_of({"jail=/j", "x=1"}).rfind("plugstack.conf: ", 0), 0U);
}

TEST(Fingerprint, ChangesWithEveryMountSetting) {
    const auto base = sjail::fingerprint(parse_config({"jail=/j"}).config);
    for (const auto &extra :
         {"munge=/m", "conf_dir=/c", "spool=/s", "tmp=/t", "bind=/a", "bind=/a:/a:ro", "gpu=on",
          "gpu=off", "gpu_driver_root=/d", "gpu_mps_dir=/run/m", "run=jail"}) {
        EXPECT_NE(sjail::fingerprint(parse_config({"jail=/j", extra}).config), base) << extra;
    }
    EXPECT_NE(sjail::fingerprint(parse_config({"jail=/k"}).config), base);
    EXPECT_EQ(sjail::fingerprint(parse_config({"jail=/j", "allow_opt_out=root"}).config), base);
    EXPECT_EQ(sjail::fingerprint(parse_config({"jail=/j", "run=node"}).config), base);
}

TEST(OptOut, ByNameOrUid) {
    auto c = parse_config({"jail=/j", "allow_opt_out=admin,1500"}).config;
    EXPECT_TRUE(sjail::opt_out_allowed(c, "admin", 1000));
    EXPECT_TRUE(sjail::opt_out_allowed(c, "someone", 1500));
    EXPECT_FALSE(sjail::opt_out_allowed(c, "someone", 1000));
    EXPECT_FALSE(sjail::opt_out_allowed(c, "", 1000));
    auto none = parse_config({"jail=/j"}).config;
    EXPECT_FALSE(sjail::opt_out_allowed(none, "root", 0));
}

TEST(ConfigErrors, NodePathsMayNotHideNameResolution) {
    EXPECT_NE(error_of({"jail=/j", "munge=/etc/hosts"}).find("must be different"),
              std::string::npos);
    EXPECT_NE(error_of({"jail=/j", "bind=/x:/etc/resolv.conf"}).find("used twice"),
              std::string::npos);
}
