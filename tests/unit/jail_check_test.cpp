// SPDX-License-Identifier: Apache-2.0
// slurm-jail-check's pure parts: slurm.conf reading and its job container
// lines, the mount points a chroot.so line needs, the fixes, the jail's
// architecture, what containers in jobs need, the report (plugstack.conf reading is the library's:
// plugstack_test.cpp).
#include "container_needs.hpp"
#include "finding.hpp"
#include "jail_arch.hpp"
#include "job_container_lines.hpp"
#include "mps_needs.hpp"
#include "requirements.hpp"
#include "slurm_conf.hpp"
#include "su_stack.hpp"

#include "sjail/core/parse_config.hpp"

#include <gtest/gtest.h>
#include <map>
#include <optional>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace sjail::check {
namespace {

Config config_of(const std::vector<std::string> &args) {
    const auto parsed = parse_config(args);
    EXPECT_TRUE(parsed.status.ok()) << parsed.status.message();
    return parsed.config;
}

std::vector<std::string> targets(const std::vector<MountPoint> &points) {
    std::vector<std::string> out;
    for (const auto &p : points) {
        out.push_back(p.target);
    }
    return out;
}

TEST(SlurmConf, KeysAreCaseInsensitiveAndDefaultsFillIn) {
    const auto conf = parse_slurm_conf("# comment\n"
                                       "slurmdspooldir=/var/spool/slurm/d  # node spool\n"
                                       "SlurmUser=\"slurm\"\n"
                                       "NodeName=n1 SlurmdSpoolDir=/ignored\n"
                                       "TaskEpilog=/etc/slurm/epilog\n"
                                       "Include /etc/slurm/nodes.conf\n");
    const auto s = slurm_settings(conf, "/etc/slurm/slurm.conf", "/usr/lib/slurm-wlm");
    EXPECT_EQ(s.spool_dir, "/var/spool/slurm/d");
    EXPECT_EQ(s.slurm_user, "slurm");
    EXPECT_EQ(s.plugstack, "/etc/slurm/plugstack.conf");
    EXPECT_EQ(s.plugin_dirs, std::vector<std::string>{"/usr/lib/slurm-wlm"});
    EXPECT_EQ(s.task_scripts, std::vector<std::string>{"/etc/slurm/epilog"});
    EXPECT_EQ(conf.includes, std::vector<std::string>{"/etc/slurm/nodes.conf"});

    const auto empty = slurm_settings(parse_slurm_conf(""), "/opt/slurm/etc/slurm.conf", "/p");
    EXPECT_EQ(empty.spool_dir, "/var/spool/slurmd");
    EXPECT_EQ(empty.slurm_user, "root");
    EXPECT_EQ(empty.plugstack, "/opt/slurm/etc/plugstack.conf");
}

TEST(SlurmConf, PluginDirIsAColonList) {
    const auto s = slurm_settings(parse_slurm_conf("PluginDir=/a:/b/\nPlugStackConfig=/x/p.conf"),
                                  "/etc/slurm/slurm.conf", "/d");
    EXPECT_EQ(s.plugin_dirs, (std::vector<std::string>{"/a", "/b/"}));
    EXPECT_EQ(s.plugstack, "/x/p.conf");
    EXPECT_EQ(plugin_paths("chroot.so", s.plugin_dirs),
              (std::vector<std::string>{"/a/chroot.so", "/b/chroot.so"}));
    EXPECT_EQ(plugin_paths("/opt/chroot.so", s.plugin_dirs),
              std::vector<std::string>{"/opt/chroot.so"});
}

TEST(Requirements, MountPointsComeFromThePluginsPlan) {
    const auto config = config_of(
        {"jail=/mnt/jail", "bind=/data:/scratch:ro", "munge=/run/m2", "spool=/var/spool/s2"});
    const auto points = plan_mount_points(config);
    const auto names = targets(points);
    for (const char *needed : {"/proc", "/dev", "/sys", "/tmp", "/run/m2", "/etc/slurm",
                               "/var/spool/s2", "/etc/hosts", "/etc/resolv.conf", "/scratch"}) {
        EXPECT_NE(std::find(names.begin(), names.end(), needed), names.end()) << needed;
    }
    const auto scratch = *std::find_if(points.begin(), points.end(),
                                       [](const MountPoint &p) { return p.target == "/scratch"; });
    EXPECT_EQ(scratch.source, "/data");
    EXPECT_EQ(scratch.setting, "bind=");
    EXPECT_EQ(scratch.type, PointType::LikeSource);
    EXPECT_EQ(points.front().target, "/proc");
    EXPECT_EQ(points.front().type, PointType::Directory);
    EXPECT_TRUE(points.front().source.empty());
    const auto munge = *std::find_if(points.begin(), points.end(),
                                     [](const MountPoint &p) { return p.target == "/run/m2"; });
    EXPECT_EQ(munge.setting, "munge=");
}

TEST(Requirements, GpuNeedsTheTreeAndTheLoaderCacheAndOptionallyTheDaemons) {
    DriverPlan plan;
    plan.tree = "/usr/local/nvidia";
    plan.binds = {{0, "/usr/local/nvidia/lib64/libcuda.so.580", true, true, ""},
                  {1, "/run/nvidia-persistenced", false, false, "add the mount point"}};
    const auto points = gpu_mount_points(plan, config_of({"jail=/j", "run=jail"}));
    ASSERT_EQ(points.size(), 3U);
    EXPECT_EQ(points[0].target, "/usr/local/nvidia");
    EXPECT_EQ(points[0].type, PointType::Directory);
    EXPECT_TRUE(points[0].required);
    EXPECT_EQ(points[1].target, "/etc/ld.so.cache");
    EXPECT_EQ(points[1].type, PointType::File);
    EXPECT_EQ(points[2].target, "/run/nvidia-persistenced");
    EXPECT_FALSE(points[2].required);
    EXPECT_FALSE(points[2].made_by_plugin);
    // With run=node the plugin makes the daemons' mount points in the node's /run.
    const auto node_run = gpu_mount_points(plan, config_of({"jail=/j"}));
    ASSERT_EQ(node_run.size(), 3U);
    EXPECT_FALSE(node_run[0].made_by_plugin);
    EXPECT_FALSE(node_run[1].made_by_plugin);
    EXPECT_TRUE(node_run[2].made_by_plugin);
}

TEST(Requirements, RunNodeNeedsRunInTheJailButNoMountPointsBelowIt) {
    const auto points = plan_mount_points(config_of({"jail=/mnt/jail", "bind=/srv/s:/run/site"}));
    const auto at = [&](const std::string &target) {
        return *std::find_if(points.begin(), points.end(),
                             [&](const MountPoint &p) { return p.target == target; });
    };
    EXPECT_EQ(at("/run").setting, "run=node");
    EXPECT_EQ(at("/run").type, PointType::Directory);
    EXPECT_TRUE(at("/run").required);
    EXPECT_FALSE(at("/run").made_by_plugin);
    // Their sources on the node are still checked; the jail needs no mount point.
    EXPECT_TRUE(at("/run/munge").made_by_plugin);
    EXPECT_EQ(at("/run/munge").source, "/run/munge");
    EXPECT_TRUE(at("/run/site").made_by_plugin);
    EXPECT_FALSE(at("/etc/slurm").made_by_plugin);

    const auto jail = plan_mount_points(config_of({"jail=/mnt/jail", "run=jail"}));
    const auto names = targets(jail);
    EXPECT_EQ(std::find(names.begin(), names.end(), "/run"), names.end());
    EXPECT_TRUE(std::none_of(jail.begin(), jail.end(),
                             [](const MountPoint &p) { return p.made_by_plugin; }));
}

TEST(Requirements, SpoolAndConfDirAreComparedWithSlurmConf) {
    const auto config = config_of({"jail=/mnt/jail"});
    auto slurm = slurm_settings(parse_slurm_conf("SlurmdSpoolDir=/var/spool/slurm/d\n"),
                                "/opt/slurm/slurm.conf", "/p");
    const auto findings = compare_with_slurm_conf(config, slurm);
    ASSERT_EQ(findings.size(), 2U);
    EXPECT_EQ(findings[0].severity, Severity::Problem);
    EXPECT_NE(findings[0].cause.find("SlurmdSpoolDir=/var/spool/slurm/d"), std::string::npos);
    EXPECT_EQ(findings[0].fix, "set spool=/var/spool/slurm/d in the chroot.so line");
    EXPECT_NE(findings[1].cause.find("outside conf_dir=/etc/slurm"), std::string::npos);
    EXPECT_NE(findings[1].fix.find("conf_dir=/opt/slurm"), std::string::npos);

    slurm = slurm_settings(parse_slurm_conf(""), "/etc/slurm/slurm.conf", "/p");
    EXPECT_TRUE(compare_with_slurm_conf(config, slurm).empty());

    slurm = slurm_settings(parse_slurm_conf("SlurmdSpoolDir=/var/spool/%n"),
                           "/etc/slurm/slurm.conf", "/p");
    const auto per_node = compare_with_slurm_conf(config, slurm);
    ASSERT_EQ(per_node.size(), 1U);
    EXPECT_EQ(per_node[0].severity, Severity::Warning);
}

TEST(Requirements, FixesFollowTheCause) {
    const MountPoint dir{"/run/munge", PointType::Directory, "/run/munge", "munge=", true};
    const MountPoint file{"/etc/hosts", PointType::File, "/etc/hosts", "built in", true};
    EXPECT_EQ(mount_point_fix("/j", dir, "mount point /run/munge is missing inside the jail"),
              "create it as a root-owned directory: mkdir -p /j/run/munge; chown root:root "
              "/j/run/munge (images/jail/finalize-rootfs makes every built-in one)");
    EXPECT_EQ(mount_point_fix("/j", file, "mount point /etc/hosts is missing inside the jail"),
              "create it as a root-owned file: touch /j/etc/hosts; chown root:root /j/etc/hosts");
    EXPECT_NE(mount_point_fix("/j", dir, "jail path /run/munge is a symlink; ...").find("symlink"),
              std::string::npos);
    EXPECT_NE(mount_point_fix("/j", dir,
                              "refusing to mount /run/munge through a path users "
                              "control: ...")
                  .find("every directory above /j/run/munge"),
              std::string::npos);
    EXPECT_NE(node_path_fix(dir, "bind source /run/munge is missing").find("start munged"),
              std::string::npos);
    const MountPoint bind{"/scratch", PointType::LikeSource, "/data", "bind=", true};
    EXPECT_EQ(node_path_fix(bind, "bind source /data is missing on this node"),
              "create /data on this node, or remove its bind= entry");
}

TEST(Requirements, PasswdNames) {
    EXPECT_EQ(passwd_names("root:x:0:0::/root:/bin/sh\n#c:x\nslurm:x:64030:64030::/:/bin/false"),
              (std::vector<std::string>{"root", "slurm"}));
}

// The first bytes of this machine's /bin/sh, made out to be for `machine`
// (64-bit, or 32-bit when `wide` is false).
std::string sh_header_for(std::uint16_t machine, bool wide = true) {
    std::ifstream in("/bin/sh", std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    std::string header = bytes.str().substr(0, 64);
    EXPECT_EQ(header.size(), 64U);
    header[EI_CLASS] = static_cast<char>(wide ? ELFCLASS64 : ELFCLASS32);
    header[18] = static_cast<char>(machine & 0xffU);
    header[19] = static_cast<char>(machine >> 8U);
    return header;
}

TEST(JailArch, AJailOfTheNodesArchitecturePasses) {
    EXPECT_EQ(jail_arch_finding("/mnt/jail", sh_header_for(EM_X86_64), kArchX8664), std::nullopt);
    EXPECT_EQ(jail_arch_finding("/mnt/jail", sh_header_for(EM_AARCH64), kArchAarch64),
              std::nullopt);
}

TEST(JailArch, AJailOfAnotherArchitectureIsOneProblemNamingBothAndTheFix) {
    const auto arm_on_x86 = jail_arch_finding("/mnt/jail", sh_header_for(EM_AARCH64), kArchX8664);
    ASSERT_TRUE(arm_on_x86.has_value());
    EXPECT_EQ(format_finding(*arm_on_x86),
              "PROBLEM: the jail /mnt/jail is aarch64 (its /bin/sh), but this node is x86-64: no "
              "program in it can run here -- fix: give x86-64 nodes a jail built for x86-64 "
              "(mmdebstrap --arch=amd64), or run this jail on nodes of its own architecture only");
    const auto x86_on_arm = jail_arch_finding("/mnt/jail", sh_header_for(EM_X86_64), kArchAarch64);
    ASSERT_TRUE(x86_on_arm.has_value());
    EXPECT_NE(x86_on_arm->cause.find("is x86-64 (its /bin/sh), but this node is aarch64"),
              std::string::npos);
    EXPECT_NE(x86_on_arm->fix.find("mmdebstrap --arch=arm64"), std::string::npos);
    const auto i386 = jail_arch_finding("/j", sh_header_for(EM_386, false), kArchX8664);
    ASSERT_TRUE(i386.has_value());
    EXPECT_NE(i386->cause.find("the jail /j is i386"), std::string::npos);
}

TEST(JailArch, AShellThatIsNoElfProgramTellsNothing) {
    EXPECT_EQ(
        jail_arch_finding("/mnt/jail", "#!/bin/busybox sh\nexec busybox sh \"$@\"\n", kArchX8664),
        std::nullopt);
    EXPECT_EQ(jail_arch_finding("/mnt/jail", "", kArchX8664), std::nullopt);
}

TEST(Report, OneLinePerFindingAndASummary) {
    const Finding problem{Severity::Problem, "mount point /x is\nmissing", "mkdir /x"};
    const Finding warning{Severity::Warning, "no srun", "install slurm-client"};
    EXPECT_EQ(format_finding(problem), "PROBLEM: mount point /x is missing -- fix: mkdir /x");
    EXPECT_EQ(format_finding(warning), "WARNING: no srun -- fix: install slurm-client");
    EXPECT_EQ(summary_line({}), "no problems found");
    EXPECT_EQ(summary_line({warning}), "no problems found (1 warning)");
    EXPECT_EQ(summary_line({problem}), "1 problem");
    EXPECT_EQ(summary_line({problem, problem, warning, warning}), "2 problems, 2 warnings");
    EXPECT_EQ(exit_status({}), 0);
    EXPECT_EQ(exit_status({warning}), 0);
    EXPECT_EQ(exit_status({warning, problem}), 1);
}

std::vector<Finding> job_container_findings(std::string_view conf, bool namespace_plugins) {
    const SlurmInterface slurm{namespace_plugins ? "26.05" : "24.11", namespace_plugins};
    return check_job_container_lines(job_container_lines(parse_slurm_conf(conf)), slurm);
}

TEST(JobContainerLines, EachReleaseWantsItsOwnLineAndContain) {
    EXPECT_TRUE(job_container_findings("JobContainerType=job_container/slurm_jail\n"
                                       "PrologFlags=Alloc,Contain\n",
                                       false)
                    .empty());
    EXPECT_TRUE(
        job_container_findings("NamespaceType=namespace/slurm_jail\nPrologFlags=contain\n", true)
            .empty());
    EXPECT_EQ(job_container_line({"24.11", false}), "JobContainerType=job_container/slurm_jail");
    EXPECT_EQ(job_container_line({"26.05", true}), "NamespaceType=namespace/slurm_jail");

    const auto no_contain =
        job_container_findings("NamespaceType=namespace/slurm_jail\nPrologFlags=Alloc\n", true);
    ASSERT_EQ(no_contain.size(), 1U);
    EXPECT_EQ(no_contain[0].severity, Severity::Problem);
    EXPECT_NE(no_contain[0].cause.find("PrologFlags has no Contain"), std::string::npos);
    EXPECT_EQ(no_contain[0].fix, "add Contain to PrologFlags in slurm.conf (PrologFlags=Contain)");
}

TEST(JobContainerLines, NoneConfiguredIsAWarningWithTheReleasesLine) {
    for (const bool ns : {false, true}) {
        const auto none = job_container_findings("ClusterName=c\n", ns);
        ASSERT_EQ(none.size(), 1U);
        EXPECT_EQ(none[0].severity, Severity::Warning);
        EXPECT_EQ(none[0].cause.find("(its Include files"), std::string::npos);
        EXPECT_EQ(none[0].fix, "add " +
                                   std::string(ns ? "NamespaceType=namespace/slurm_jail"
                                                  : "JobContainerType=job_container/slurm_jail") +
                                   " and PrologFlags=Contain to slurm.conf");
    }
    const auto included = job_container_findings("Include /etc/slurm/more.conf\n", true);
    ASSERT_EQ(included.size(), 1U);
    EXPECT_NE(included[0].cause.find("(its Include files were not read)"), std::string::npos);
}

TEST(JobContainerLines, OldLineOnANamespaceReleaseIsAWarning) {
    const auto old = job_container_findings(
        "JobContainerType=job_container/slurm_jail\nPrologFlags=Contain\n", true);
    ASSERT_EQ(old.size(), 1U);
    EXPECT_EQ(old[0].severity, Severity::Warning);
    EXPECT_NE(old[0].cause.find("Slurm 26.05 reads it as NamespaceType"), std::string::npos);
    EXPECT_EQ(old[0].fix, "write NamespaceType=namespace/slurm_jail instead");
}

TEST(JobContainerLines, NamespaceTypeOnAnOlderReleaseIsAProblem) {
    const auto findings =
        job_container_findings("NamespaceType=namespace/slurm_jail\nPrologFlags=Contain\n", false);
    ASSERT_EQ(findings.size(), 2U);
    EXPECT_EQ(findings[0].severity, Severity::Problem);
    EXPECT_NE(findings[0].cause.find("which Slurm 24.11 does not know"), std::string::npos);
    EXPECT_EQ(findings[0].fix, "write JobContainerType=job_container/slurm_jail instead");
    // Slurm 24.11 ignores the line: no job container is loaded at all.
    EXPECT_EQ(findings[1].severity, Severity::Warning);
    EXPECT_NE(findings[1].cause.find("names no job container"), std::string::npos);
}

TEST(JobContainerLines, AnotherJobContainerStackedOrAloneIsAProblem) {
    const auto stacked = job_container_findings(
        "NamespaceType=namespace/linux,namespace/slurm_jail\nPrologFlags=Contain\n", true);
    ASSERT_EQ(stacked.size(), 1U);
    EXPECT_EQ(stacked[0].severity, Severity::Problem);
    EXPECT_NE(stacked[0].cause.find("stacks namespace/linux with slurm-jail's job container"),
              std::string::npos);
    EXPECT_EQ(stacked[0].fix.rfind("use NamespaceType=namespace/slurm_jail alone", 0), 0U);

    // 25.11 reads JobContainerType=job_container/tmpfs as namespace/tmpfs.
    const auto mapped = job_container_findings("JobContainerType=job_container/tmpfs\n"
                                               "NamespaceType=namespace/slurm_jail\n"
                                               "PrologFlags=Contain\n",
                                               true);
    ASSERT_EQ(mapped.size(), 1U);
    EXPECT_NE(mapped[0].cause.find("stacks job_container/tmpfs"), std::string::npos);

    const auto alone = job_container_findings(
        "JobContainerType=job_container/tmpfs\nPrologFlags=Contain\n", false);
    ASSERT_EQ(alone.size(), 1U);
    EXPECT_EQ(alone[0].severity, Severity::Problem);
    EXPECT_NE(alone[0].cause.find("job_container/tmpfs makes per-job namespaces of its own"),
              std::string::npos);
    EXPECT_EQ(alone[0].fix.rfind("use JobContainerType=job_container/slurm_jail alone", 0), 0U);
}

// A node and jail where containers work: podman and ch-run in the jail, user
// namespaces allowed, /dev/fuse 0666, setuid id-map helpers, every user with
// subordinate ids.
ContainerFacts ready_for_containers() {
    ContainerFacts facts;
    facts.runtimes = {"/usr/bin/podman", "/usr/bin/ch-run"};
    facts.max_user_namespaces = 63936;
    facts.fuse_mode = 0666;
    facts.id_map_helpers = {{"/usr/bin/newuidmap", true}, {"/usr/bin/newgidmap", true}};
    return facts;
}

std::string causes(const std::vector<Finding> &findings) {
    std::string out;
    for (const auto &f : findings) {
        EXPECT_EQ(f.severity, Severity::Warning) << f.cause;
        out += f.cause + " -- " + f.fix + "\n";
    }
    return out;
}

TEST(ContainerNeeds, AJailWithoutARuntimeIsNotChecked) {
    ContainerFacts facts;
    facts.max_user_namespaces = 0;
    facts.apparmor_restricts_userns = true;
    EXPECT_TRUE(container_findings("/mnt/jail", facts).empty());
}

TEST(ContainerNeeds, ANodeAndJailReadyForContainersPass) {
    EXPECT_EQ(causes(container_findings("/mnt/jail", ready_for_containers())), "");
}

TEST(ContainerNeeds, EachGapIsOneWarningNamingTheRuntimesAndTheFix) {
    auto facts = ready_for_containers();
    facts.max_user_namespaces = 0;
    auto out = causes(container_findings("/mnt/jail", facts));
    EXPECT_NE(out.find("user.max_user_namespaces is 0): the jail's container runtimes "
                       "(/usr/bin/podman, /usr/bin/ch-run) fail in every job"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find("sysctl -w user.max_user_namespaces="), std::string::npos) << out;

    facts = ready_for_containers();
    facts.apparmor_restricts_userns = true;
    out = causes(container_findings("/mnt/jail", facts));
    EXPECT_NE(out.find("kernel.apparmor_restrict_unprivileged_userns is 1"), std::string::npos)
        << out;
    EXPECT_NE(out.find("sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"),
              std::string::npos)
        << out;

    facts = ready_for_containers();
    facts.fuse_mode = 0600;
    out = causes(container_findings("/mnt/jail", facts));
    EXPECT_NE(out.find("/dev/fuse on this node is not readable and writable by every user"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find("chmod 0666 /dev/fuse"), std::string::npos) << out;
    facts.fuse_mode.reset();
    EXPECT_NE(causes(container_findings("/mnt/jail", facts)).find("this node has no /dev/fuse"),
              std::string::npos);

    facts = ready_for_containers();
    facts.id_map_helpers[1].setuid_root = false;
    out = causes(container_findings("/mnt/jail", facts));
    EXPECT_NE(out.find("/mnt/jail/usr/bin/newgidmap is not setuid root"), std::string::npos) << out;
    EXPECT_EQ(out.find("newuidmap"), std::string::npos) << out;

    facts = ready_for_containers();
    facts.users_without_subids = {"alice", "bob"};
    out = causes(container_findings("/mnt/jail", facts));
    EXPECT_NE(out.find("/mnt/jail/etc/subuid and /etc/subgid (alice, bob)"), std::string::npos)
        << out;
}

TEST(ContainerNeeds, EveryGapAtOnce) {
    ContainerFacts facts;
    facts.runtimes = {"/usr/bin/enroot"};
    facts.max_user_namespaces = 0;
    facts.apparmor_restricts_userns = true;
    facts.id_map_helpers = {{"/usr/bin/newuidmap", false}};
    facts.users_without_subids = {"u1", "u2", "u3", "u4", "u5", "u6", "u7"};
    const auto findings = container_findings("/j", facts);
    ASSERT_EQ(findings.size(), 5U) << causes(findings);
    EXPECT_NE(findings[4].cause.find("(u1, u2, u3, u4, u5 and 2 more)"), std::string::npos)
        << findings[4].cause;
}

TEST(ContainerNeeds, ARangeHoldingAnotherUsersIdIsAProblem) {
    const std::string passwd = "root:x:0:0::/root:/bin/sh\n"
                               "alice:x:1000:1000::/home/alice:/bin/sh\n"
                               "bob:x:150000:150000::/home/bob:/bin/sh\n"
                               "carol:x:165536:165536::/home/carol:/bin/sh\n";
    const std::string subuid = "alice:100000:65536\nzero:0:10\nbad:x:1\n";
    EXPECT_EQ(subid_overlaps(passwd, subuid, "/etc/subuid"),
              (std::vector<std::string>{
                  "alice's subordinate ids 100000-165535 in /etc/subuid include bob's id "
                  "150000: alice's containers can act as bob on the shared jail",
                  "zero's subordinate ids 0-9 in /etc/subuid include root's id 0: zero's "
                  "containers can act as root on the shared jail"}));
    EXPECT_TRUE(subid_overlaps(passwd, "alice:200000:65536\n", "/etc/subuid").empty());

    auto facts = ready_for_containers();
    facts.subid_overlaps = subid_overlaps(passwd, subuid, "/etc/subuid");
    const auto findings = container_findings("/mnt/jail", facts);
    ASSERT_EQ(findings.size(), 2U);
    EXPECT_EQ(findings[0].severity, Severity::Problem);
    EXPECT_EQ(findings[1].cause, "zero's subordinate ids 0-9 in /etc/subuid include root's id "
                                 "0: zero's containers can act as root on the shared jail");
    EXPECT_NE(findings[0].fix.find("SUB_UID_MIN"), std::string::npos);
}

TEST(ContainerNeeds, SlurmsOwnOciSupportIsAProblemNamingTheFile) {
    const auto finding = slurm_oci_finding("/etc/slurm/oci.conf");
    EXPECT_EQ(finding.severity, Severity::Problem);
    EXPECT_EQ(finding.cause.rfind("/etc/slurm/oci.conf turns on Slurm's own OCI support", 0), 0U)
        << finding.cause;
    EXPECT_NE(finding.cause.find("as root on the node's own root"), std::string::npos);
    EXPECT_EQ(finding.fix.rfind("remove /etc/slurm/oci.conf;", 0), 0U) << finding.fix;
}

TEST(ContainerNeeds, UsersWithoutSubordinateIdsInEitherFile) {
    const std::string passwd = "root:x:0:0:root:/root:/bin/bash\n"
                               "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
                               "daemon:x:1:1::/:/bin/false\n"
                               "slurm:x:64030:64030::/nonexistent:/usr/sbin/nologin\n"
                               "alice:x:1000:1000::/home/alice:/bin/bash\n"
                               "bob:x:1001:1001::/home/bob:/bin/bash\n"
                               "carol:x:1002:1002::/home/carol:/bin/bash\n"
                               "broken line\n"
                               "dave:x:notanumber:1::/:/bin/sh";
    const std::string subuid = "alice:100000:65536\nbob:165536:65536\n";
    const std::string subgid = "alice:100000:65536\ncarol:231072:65536\n";
    EXPECT_EQ(users_without_subids(passwd, {subuid, subgid}),
              (std::vector<std::string>{"bob", "carol"}));
    EXPECT_EQ(users_without_subids(passwd, {"", ""}),
              (std::vector<std::string>{"alice", "bob", "carol"}));
    // a name that is only the prefix of another's is not that user's entry
    EXPECT_EQ(users_without_subids("al:x:1000:1000::/:/bin/sh\n", {subuid, subgid}),
              (std::vector<std::string>{"al"}));
}

// ---- a node-wide MPS daemon's clients in jobs ----

TEST(MpsNeeds, NoDaemonOrJobsThatGetItsShmPass) {
    EXPECT_FALSE(mps_finding({"/run/nvidia-mps", false, "", false}));
    EXPECT_FALSE(mps_finding({"/run/nvidia-mps", false, "/run/nvidia/mps/shm", false}));
    EXPECT_FALSE(mps_finding({"/run/nvidia-mps", true, "/run/nvidia/mps/shm", true}));
}

TEST(MpsNeeds, ADaemonWhoseShmJobsDoNotGetIsAWarningWithTheFix) {
    const auto unset = mps_finding({"/run/nvidia-mps", true, "", false});
    ASSERT_TRUE(unset);
    EXPECT_EQ(unset->severity, Severity::Warning);
    EXPECT_NE(unset->cause.find("/run/nvidia-mps/control"), std::string::npos) << unset->cause;
    EXPECT_NE(unset->cause.find("gpu_mps_shm= is not set"), std::string::npos) << unset->cause;
    EXPECT_NE(unset->fix.find("set gpu_mps_shm="), std::string::npos) << unset->fix;
    const auto missing = mps_finding({"/run/nvidia-mps", true, "/run/nvidia/mps/shm", false});
    ASSERT_TRUE(missing);
    EXPECT_EQ(missing->severity, Severity::Warning);
    EXPECT_NE(missing->cause.find("gpu_mps_shm=/run/nvidia/mps/shm does not exist"),
              std::string::npos)
        << missing->cause;
}

} // namespace
} // namespace sjail::check

namespace {

// su's stack from files in memory (names as PAM takes them: below
// /etc/pam.d, or absolute).
struct PamFiles {
    std::map<std::string, std::string> files;
    sjail::check::SuStackVerdict judge(const std::string &su) {
        files["su"] = su;
        const auto stack = sjail::check::read_session_stack(
            "su", [this](const std::string &name) -> std::optional<std::string> {
                const auto found = files.find(name);
                return found == files.end() ? std::nullopt : std::optional(found->second);
            });
        unreadable = stack.unreadable;
        return sjail::check::judge_su_stack(stack);
    }
    std::vector<std::string> unreadable;
};

// Debian 12's common-session, as pam-auth-update writes it.
const std::string kDebianCommonSession = "session\t[default=1]\t\t\tpam_permit.so\n"
                                         "session\trequisite\t\t\tpam_deny.so\n"
                                         "session\trequired\t\t\tpam_permit.so\n"
                                         "session\trequired\tpam_unix.so \n"
                                         "session\toptional\tpam_systemd.so \n";
const std::string kJail = "session required pam_slurm_jail.so node=compute no_job=private\n";

} // namespace

// su enters the jail only through a session line that fails su when the
// jail cannot be entered.
TEST(SuStack, EntersTheJailOnlyWithARequiredSessionLine) {
    PamFiles pam;
    const std::string head = "auth       sufficient pam_rootok.so\n"
                             "session    required   pam_limits.so\n";
    EXPECT_FALSE(pam.judge(head).enters_jail);
    EXPECT_TRUE(pam.judge(head + kJail).enters_jail);
    EXPECT_TRUE(pam.judge(head + "session\trequisite\t/opt/lib/pam_slurm_jail.so\n").enters_jail);
    // Not enforcing, not the session phase, commented out, another module.
    EXPECT_FALSE(pam.judge(head + "session optional pam_slurm_jail.so\n").enters_jail);
    EXPECT_FALSE(pam.judge(head + "session [default=ignore] pam_slurm_jail.so\n").enters_jail);
    EXPECT_FALSE(pam.judge(head + "account required pam_slurm_jail.so\n").enters_jail);
    EXPECT_FALSE(pam.judge(head + "# session required pam_slurm_jail.so\n").enters_jail);
    EXPECT_FALSE(pam.judge(head + "session required pam_slurm_jail.so.bak\n").enters_jail);
    EXPECT_FALSE(pam.judge(head + "session required /x/not_pam_slurm_jail.so\n").enters_jail);
    EXPECT_FALSE(pam.judge("").enters_jail);
    // In an included file, and on a continued line.
    pam.files["su-session"] = kJail;
    EXPECT_TRUE(pam.judge(head + "@include su-session\n").enters_jail);
    EXPECT_TRUE(pam.judge(head + "session include su-session\n").enters_jail);
    EXPECT_TRUE(pam.judge(head + "session required \\\n  pam_slurm_jail.so\n").enters_jail);
}

// What PAM runs before pam_slurm_jail.so and can end the stack (su then runs
// the user's code on the node's root) or starts the user's processes there.
TEST(SuStack, WhatCanEndTheStackOrStartProcessesBeforeTheJailIsAProblem) {
    PamFiles pam;
    pam.files["common-session"] = kDebianCommonSession;
    // Debian's own su: common-session's pam_systemd runs first. Its jump of
    // one ([default=1]) stays inside common-session.
    auto verdict = pam.judge("@include common-session\n" + kJail);
    ASSERT_EQ(verdict.before_jail.size(), 1U);
    EXPECT_EQ(verdict.before_jail[0],
              "'session optional pam_systemd.so' (/etc/pam.d/common-session:5) runs before "
              "pam_slurm_jail.so: it starts the user's systemd --user, with the user's own unit "
              "files, on the node's own root");
    // After the jail's line, nothing of it matters.
    EXPECT_TRUE(pam.judge(kJail + "@include common-session\n").before_jail.empty());
    // Ending the stack early, from su's file or from an included one.
    verdict = pam.judge("session sufficient pam_permit.so\n" + kJail);
    ASSERT_EQ(verdict.before_jail.size(), 1U);
    EXPECT_EQ(verdict.before_jail[0],
              "'session sufficient pam_permit.so' (/etc/pam.d/su:1) can end su's session stack "
              "before pam_slurm_jail.so: su then runs the user's ~/.bash_profile on the node's "
              "own root");
    pam.files["early"] = "session [success=done default=ignore] pam_succeed_if.so user = x\n";
    EXPECT_EQ(pam.judge("session include early\n" + kJail).before_jail.size(), 1U);
    // A jump over it, and one that lands before it.
    verdict = pam.judge("session [success=2 default=ignore] pam_permit.so\n"
                        "session optional pam_env.so\n" +
                        kJail);
    ASSERT_EQ(verdict.before_jail.size(), 1U);
    EXPECT_NE(verdict.before_jail[0].find("can jump over pam_slurm_jail.so"), std::string::npos);
    EXPECT_TRUE(pam.judge("session [success=1 default=ignore] pam_permit.so\n"
                          "session optional pam_env.so\n" +
                          kJail)
                    .before_jail.empty());
    // pam_exec, also marked optional-if-missing ("-session").
    EXPECT_EQ(
        pam.judge("-session optional pam_exec.so /usr/local/bin/hook\n" + kJail).before_jail.size(),
        1U);
}

// A substack is a stack of its own: what ends it early ends only it.
TEST(SuStack, ASubstackEndsOnlyItself) {
    PamFiles pam;
    pam.files["quick"] = "session sufficient pam_permit.so\nsession optional pam_env.so\n";
    EXPECT_TRUE(pam.judge("session substack quick\n" + kJail).before_jail.empty());
    // The jail's line inside a substack that ends early before it.
    pam.files["jailed"] = "session sufficient pam_permit.so\n" + kJail;
    const auto verdict = pam.judge("session substack jailed\n");
    EXPECT_TRUE(verdict.enters_jail);
    EXPECT_EQ(verdict.before_jail.size(), 1U);
    // A substack skipped by a jump in su's own stack.
    pam.files["jail-only"] = kJail;
    EXPECT_EQ(pam.judge("session [default=1] pam_permit.so\nsession substack jail-only\n")
                  .before_jail.size(),
              1U);
}

// Files that cannot be read, and include loops, are named: the check cannot
// tell what runs before the jail then.
TEST(SuStack, MissingFilesAndIncludeLoopsAreNamed) {
    PamFiles pam;
    EXPECT_TRUE(pam.judge("@include no-such-file\n" + kJail).enters_jail);
    ASSERT_EQ(pam.unreadable.size(), 1U);
    EXPECT_EQ(pam.unreadable[0], "/etc/pam.d/su:1: /etc/pam.d/no-such-file cannot be read");
    pam.files["loop"] = "@include loop\n";
    (void)pam.judge("@include loop\n" + kJail);
    ASSERT_EQ(pam.unreadable.size(), 1U);
    EXPECT_NE(pam.unreadable[0].find("more than 16 files deep (an include loop?)"),
              std::string::npos);
}

TEST(MpsNeeds, TheDaemonsShmIsBoundedByASizeLimitedTmpfs) {
    constexpr unsigned long long kGiB = 1ULL << 30U;
    EXPECT_FALSE(
        sjail::check::mps_shm_space_finding({"/run/nvidia/mps/shm", true, kGiB, 64 * kGiB}));
    const auto not_tmpfs =
        sjail::check::mps_shm_space_finding({"/run/nvidia/mps/shm", false, kGiB, 64 * kGiB});
    ASSERT_TRUE(not_tmpfs);
    EXPECT_EQ(not_tmpfs->severity, sjail::check::Severity::Warning);
    EXPECT_NE(not_tmpfs->cause.find("gpu_mps_shm=/run/nvidia/mps/shm is not a tmpfs"),
              std::string::npos)
        << not_tmpfs->cause;
    EXPECT_NE(not_tmpfs->fix.find("mount -t tmpfs -o size="), std::string::npos) << not_tmpfs->fix;
    const auto half =
        sjail::check::mps_shm_space_finding({"/run/nvidia/mps/shm", true, 32 * kGiB, 64 * kGiB});
    ASSERT_TRUE(half);
    EXPECT_NE(half->cause.find("the kernel's default"), std::string::npos) << half->cause;
}
