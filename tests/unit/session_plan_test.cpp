// SPDX-License-Identifier: Apache-2.0
#include "session_plan.hpp"
#include "sjail/core/node/node_role.hpp"

#include <gtest/gtest.h>

using sjail::chroot_args;
using sjail::decide_session;
using sjail::find_passwd_entry;
using sjail::is_slurmd_exe;
using sjail::job_of_cgroup;
using sjail::judge_owner_query;
using sjail::NodeRole;
using sjail::NoJobSessions;
using sjail::parse_job_id;
using sjail::parse_module_args;
using sjail::SessionAction;
using sjail::SessionFacts;

namespace {
const std::string kFile = "/etc/slurm/plugstack.conf";
using Args = std::vector<std::string>;
} // namespace

// ---- the chroot.so line among the plugins of plugstack.conf ----
// (reading the files and their includes: plugstack_test.cpp and
// plugstack_sys_test.cpp)

namespace {
sjail::PlugstackArgs args_of(const std::string &text,
                             const std::vector<std::string> &empty_includes = {}) {
    std::vector<sjail::PluginLine> plugins;
    for (const auto &entry : sjail::parse_plugstack(text, kFile).entries) {
        if (const auto *plugin = std::get_if<sjail::PluginLine>(&entry)) {
            plugins.push_back(*plugin);
        }
    }
    return chroot_args(plugins, kFile, empty_includes);
}
} // namespace

TEST(Plugstack, TakesTheChrootSoLineArguments) {
    const auto got = args_of(
        "# the jail\noptional other.so x=1\nrequired chroot.so jail=/mnt/jail  bind=/a:/b:ro\n");
    ASSERT_TRUE(got.status.ok()) << got.status.message();
    EXPECT_EQ(got.args, (Args{"jail=/mnt/jail", "bind=/a:/b:ro"}));
}

TEST(Plugstack, PluginNamedByPathTabsAndTrailingComment) {
    const auto got =
        args_of("optional\t/usr/lib/x86_64-linux-gnu/slurm-wlm/chroot.so\tjail=/j # comment\r\n");
    ASSERT_TRUE(got.status.ok()) << got.status.message();
    EXPECT_EQ(got.args, (Args{"jail=/j"}));
}

TEST(Plugstack, CommentedOutLineAndLookalikesAreNotTheLine) {
    const auto got =
        args_of("#required chroot.so jail=/old\nrequired notchroot.so jail=/x\nrequired "
                "/lib/mychroot.so jail=/y\n",
                {kFile + ":4: include /etc/slurm/plugstack.conf.d/*"});
    EXPECT_FALSE(got.status.ok());
    EXPECT_NE(got.status.message().find(kFile + " has no chroot.so line"), std::string::npos);
    EXPECT_NE(got.status.message().find("nor has any file it includes; these include lines "
                                        "match no file: " +
                                        kFile + ":4: include /etc/slurm/plugstack.conf.d/*"),
              std::string::npos)
        << got.status.message();
    EXPECT_NE(got.status.message().find("see chroot.so(8)"), std::string::npos);
}

TEST(Plugstack, TwoChrootSoLinesAreAnError) {
    const auto got = args_of("required chroot.so jail=/a\noptional chroot.so jail=/b\n");
    EXPECT_FALSE(got.status.ok());
    EXPECT_TRUE(got.args.empty());
    EXPECT_NE(got.status.message().find("more than one chroot.so line (" + kFile + ":1, " + kFile +
                                        ":2); keep one"),
              std::string::npos)
        << got.status.message();
}

TEST(Plugstack, EmptyFile) {
    EXPECT_FALSE(args_of("").status.ok());
}

// ---- module arguments ----

TEST(ModuleArgs, DefaultIsEtcSlurmPlugstack) {
    const auto got = parse_module_args({});
    ASSERT_TRUE(got.status.ok());
    EXPECT_EQ(got.plugstack, "/etc/slurm/plugstack.conf");
}

TEST(ModuleArgs, PlugstackPath) {
    const auto got = parse_module_args({"plugstack=/etc/other/plugstack.conf"});
    ASSERT_TRUE(got.status.ok()) << got.status.message();
    EXPECT_EQ(got.plugstack, "/etc/other/plugstack.conf");
}

TEST(ModuleArgs, ErrorsNameTheFix) {
    EXPECT_NE(parse_module_args({"jail=/mnt/jail"}).status.message().find("plugstack=FILE"),
              std::string::npos);
    EXPECT_NE(parse_module_args({"plugstack=relative"}).status.message().find("absolute"),
              std::string::npos);
    EXPECT_NE(parse_module_args({"plugstack="}).status.message().find("absolute"),
              std::string::npos);
    EXPECT_NE(parse_module_args({"plugstack=/a", "plugstack=/b"}).status.message().find("twice"),
              std::string::npos);
}

TEST(ModuleArgs, NodeAndNoJobDefaultToAutoAndRefuse) {
    const auto got = parse_module_args({});
    EXPECT_EQ(got.node, NodeRole::Auto);
    EXPECT_EQ(got.no_job, NoJobSessions::Refuse);
}

TEST(ModuleArgs, NodeAndNoJobValues) {
    auto got = parse_module_args({"node=compute", "no_job=private"});
    ASSERT_TRUE(got.status.ok()) << got.status.message();
    EXPECT_EQ(got.node, NodeRole::Compute);
    EXPECT_EQ(got.no_job, NoJobSessions::Private);
    got = parse_module_args({"no_job=refuse", "node=login", "plugstack=/p"});
    ASSERT_TRUE(got.status.ok()) << got.status.message();
    EXPECT_EQ(got.node, NodeRole::Login);
    EXPECT_EQ(got.no_job, NoJobSessions::Refuse);
    EXPECT_EQ(got.plugstack, "/p");
    EXPECT_EQ(parse_module_args({"node=auto"}).node, NodeRole::Auto);
}

TEST(ModuleArgs, BadNodeOrNoJobValuesAreErrors) {
    EXPECT_NE(parse_module_args({"node=worker"}).status.message().find("auto, login or compute"),
              std::string::npos);
    EXPECT_NE(parse_module_args({"no_job=allow"}).status.message().find("refuse or private"),
              std::string::npos);
    EXPECT_NE(parse_module_args({"no_job"}).status.message().find("unknown argument"),
              std::string::npos);
    EXPECT_NE(parse_module_args({"node=login", "node=compute"}).status.message().find("twice"),
              std::string::npos);
    EXPECT_NE(
        parse_module_args({"no_job=private", "no_job=private"}).status.message().find("twice"),
        std::string::npos);
}

// ---- the job of a cgroup ----

TEST(CgroupJob, V1ExternStepWithUid) {
    const auto got = job_of_cgroup("12:freezer:/slurm/uid_5001/job_42/step_extern\n"
                                   "11:memory:/slurm/uid_5001/job_42/step_extern/task_0\n"
                                   "1:name=systemd:/user.slice\n");
    ASSERT_TRUE(got.status.ok());
    EXPECT_EQ(got.job, 42U);
    EXPECT_EQ(got.uid, 5001U);
}

TEST(CgroupJob, V2ExternStep) {
    const auto got = job_of_cgroup("0::/system.slice/slurmstepd.scope/job_7/step_extern/user\n");
    ASSERT_TRUE(got.status.ok());
    EXPECT_EQ(got.job, 7U);
    EXPECT_FALSE(got.uid.has_value());
}

TEST(CgroupJob, NoSlurmJob) {
    const auto got = job_of_cgroup("0::/\n4:cpu:/user.slice\n");
    ASSERT_TRUE(got.status.ok());
    EXPECT_FALSE(got.job.has_value());
}

TEST(CgroupJob, AJobComponentWithoutAStepBelowIsNotAJob) {
    EXPECT_FALSE(job_of_cgroup("0::/home/job_5\n").job.has_value());
    EXPECT_FALSE(job_of_cgroup("0::/slurm/job_5x/step_0\n").job.has_value());
    EXPECT_FALSE(job_of_cgroup("0::/slurm/job_/step_0\n").job.has_value());
}

TEST(CgroupJob, PathsHoldingColons) {
    const auto got = job_of_cgroup("3:cpu,cpuacct:/odd:name/slurm/uid_1/job_9/step_extern\n");
    EXPECT_EQ(got.job, 9U);
}

TEST(CgroupJob, TwoJobsAreRefused) {
    const auto got = job_of_cgroup("12:freezer:/slurm/uid_1/job_1/step_extern\n"
                                   "11:memory:/slurm/uid_1/job_2/step_extern\n");
    EXPECT_FALSE(got.status.ok());
    EXPECT_FALSE(got.job.has_value());
}

TEST(CgroupJob, TwoUidsAreRefused) {
    const auto got = job_of_cgroup("12:freezer:/slurm/uid_1/job_1/step_extern\n"
                                   "11:memory:/slurm/uid_2/job_1/step_extern\n");
    EXPECT_FALSE(got.status.ok());
}

TEST(JobId, Parse) {
    EXPECT_EQ(parse_job_id("123"), 123U);
    EXPECT_FALSE(parse_job_id("").has_value());
    EXPECT_FALSE(parse_job_id("0").has_value());
    EXPECT_FALSE(parse_job_id("-1").has_value());
    EXPECT_FALSE(parse_job_id("12 ").has_value());
    EXPECT_FALSE(parse_job_id("4294967296").has_value());
    EXPECT_FALSE(parse_job_id("1e3").has_value());
}

// ---- passwd ----

TEST(Passwd, FindsTheExactName) {
    const std::string text = "root:x:0:0:root:/root:/bin/bash\n"
                             "sjuser2:x:5002:5002::/home/sjuser2:/bin/sh\n"
                             "sjuser:x:5001:5001:test user:/home/sjuser:/bin/bash\n";
    const auto got = find_passwd_entry(text, "sjuser");
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->uid, 5001U);
    EXPECT_EQ(got->gid, 5001U);
    EXPECT_EQ(got->home, "/home/sjuser");
    EXPECT_EQ(got->shell, "/bin/bash");
    EXPECT_FALSE(find_passwd_entry(text, "sjuse").has_value());
    EXPECT_FALSE(find_passwd_entry(text, "").has_value());
}

TEST(Passwd, MalformedEntriesAreNoEntry) {
    EXPECT_FALSE(find_passwd_entry("u:x:abc:1::/h:/bin/sh\n", "u").has_value());
    EXPECT_FALSE(find_passwd_entry("u:x:1:1::/h\n", "u").has_value());
    EXPECT_FALSE(find_passwd_entry("u:x:1:1::/h:/bin/sh:extra\n", "u").has_value());
    EXPECT_FALSE(find_passwd_entry("+u::::::\n", "u").has_value());
}

// ---- the decision ----

namespace {
SessionFacts facts_for(unsigned uid) {
    SessionFacts f;
    f.uid = uid;
    return f;
}
} // namespace

TEST(Decide, LoginNodeWithoutJobsUsesTheNodeNamespace) {
    EXPECT_EQ(decide_session(facts_for(5001)).action, SessionAction::Node);
}

TEST(Decide, ComputeNodeWithoutJobsNeverGetsTheNodeNamespace) {
    // slurmd runs here (node=auto), or the admin said node=compute: a job
    // may start at any time, so no session shares the node's PID namespace.
    auto f = facts_for(5001);
    f.slurmd_here = true;
    auto d = decide_session(f);
    EXPECT_EQ(d.action, SessionAction::Refuse);
    EXPECT_NE(d.reason.find("slurmd runs on this node"), std::string::npos);
    EXPECT_NE(d.reason.find("no_job=private"), std::string::npos);
    f = facts_for(5001);
    f.node = NodeRole::Compute;
    d = decide_session(f);
    EXPECT_EQ(d.action, SessionAction::Refuse);
    EXPECT_NE(d.reason.find("node=compute"), std::string::npos);
}

TEST(Decide, NoJobPrivateGivesASessionOfItsOwnOnComputeNodesOnly) {
    for (const auto node : {NodeRole::Auto, NodeRole::Compute}) {
        auto f = facts_for(5001);
        f.node = node;
        f.slurmd_here = true;
        f.no_job = NoJobSessions::Private;
        EXPECT_EQ(decide_session(f).action, SessionAction::Private);
        f.slurmd_here = false;
        f.node_has_jobs = true;
        EXPECT_EQ(decide_session(f).action, SessionAction::Private);
    }
    auto f = facts_for(5001);
    f.no_job = NoJobSessions::Private;
    EXPECT_EQ(decide_session(f).action, SessionAction::Node); // a login node
    f.pam_env_job = 7;
    EXPECT_EQ(decide_session(f).action, SessionAction::Job); // adopted sessions join the job
}

TEST(Decide, NodeLoginIgnoresSlurmdButNotRunningJobs) {
    auto f = facts_for(5001);
    f.node = NodeRole::Login;
    f.slurmd_here = true;
    EXPECT_EQ(decide_session(f).action, SessionAction::Node);
    f.node_has_jobs = true;
    EXPECT_EQ(decide_session(f).action, SessionAction::Refuse);
}

TEST(Decide, NodeWithJobsButNoAdoptionIsRefused) {
    auto f = facts_for(5001);
    f.node_has_jobs = true;
    const auto d = decide_session(f);
    EXPECT_EQ(d.action, SessionAction::Refuse);
    EXPECT_NE(d.reason.find("pam_slurm_adopt"), std::string::npos);
}

TEST(Decide, AdoptedByCgroupOrPamEnvironment) {
    auto f = facts_for(5001);
    f.node_has_jobs = true;
    f.cgroup.job = 42;
    f.cgroup.uid = 5001;
    auto d = decide_session(f);
    EXPECT_EQ(d.action, SessionAction::Job);
    EXPECT_EQ(d.job, 42U);
    f = facts_for(5001);
    f.pam_env_job = 43;
    d = decide_session(f);
    EXPECT_EQ(d.action, SessionAction::Job);
    EXPECT_EQ(d.job, 43U);
}

TEST(Decide, CgroupOfAnotherUidIsRefused) {
    auto f = facts_for(5001);
    f.cgroup.job = 42;
    f.cgroup.uid = 0;
    EXPECT_EQ(decide_session(f).action, SessionAction::Refuse);
}

TEST(Decide, CgroupAndEnvironmentDisagreeingIsRefused) {
    auto f = facts_for(5001);
    f.cgroup.job = 42;
    f.pam_env_job = 41;
    const auto d = decide_session(f);
    EXPECT_EQ(d.action, SessionAction::Refuse);
    EXPECT_NE(d.reason.find("42"), std::string::npos);
    EXPECT_NE(d.reason.find("41"), std::string::npos);
}

TEST(Decide, MalformedEnvironmentJobIsRefusedNotIgnored) {
    auto f = facts_for(5001);
    f.pam_env_job_malformed = true;
    EXPECT_EQ(decide_session(f).action, SessionAction::Refuse);
}

TEST(Decide, AmbiguousCgroupIsRefused) {
    auto f = facts_for(5001);
    f.cgroup.status = sjail::Status::failure("two jobs");
    EXPECT_EQ(decide_session(f).action, SessionAction::Refuse);
}

// ---- slurmd's executable ----

TEST(SlurmdExe, NamesTheBinaryWhereverItIs) {
    EXPECT_TRUE(is_slurmd_exe("/usr/sbin/slurmd"));
    EXPECT_TRUE(is_slurmd_exe("/opt/slurm/sbin/slurmd"));
    EXPECT_TRUE(is_slurmd_exe("/usr/sbin/slurmd (deleted)"));
    EXPECT_TRUE(is_slurmd_exe("/usr/sbin/slurmd-wlm")); // Debian
    EXPECT_FALSE(is_slurmd_exe("/usr/sbin/slurmdbd"));
    EXPECT_FALSE(is_slurmd_exe("/usr/sbin/slurmctld"));
    EXPECT_FALSE(is_slurmd_exe("/usr/sbin/slurmstepd"));
    EXPECT_FALSE(is_slurmd_exe("/home/u/slurmd-fake"));
    EXPECT_FALSE(is_slurmd_exe("slurmd"));
    EXPECT_FALSE(is_slurmd_exe(""));
}

// ---- the answer of the process that asked slurmctld ----

namespace {
constexpr int exited(int code) {
    return code << 8;
} // a wait status
constexpr int killed(int sig) {
    return sig;
}
} // namespace

TEST(OwnerQuery, OkOnlyFromAChildThatSaidOkAndExitedZero) {
    EXPECT_TRUE(judge_owner_query("\nsjail-verdict ok\n", true, exited(0)).ok());
    EXPECT_TRUE(
        judge_owner_query("slurm: debug noise\n\nsjail-verdict ok\n", true, exited(0)).ok());
    EXPECT_FALSE(judge_owner_query("\nsjail-verdict ok\n", true, exited(1)).ok());
    EXPECT_FALSE(judge_owner_query("\nsjail-verdict ok\n", false, exited(0)).ok());
    EXPECT_FALSE(judge_owner_query("\nsjail-verdict ok\n", true, killed(9)).ok());
    EXPECT_FALSE(judge_owner_query("", true, exited(0)).ok());
    EXPECT_FALSE(judge_owner_query("\nsjail-verdict okay\n", true, exited(0)).ok());
}

TEST(OwnerQuery, TheLastVerdictCounts) {
    EXPECT_FALSE(judge_owner_query("sjail-verdict ok\nsjail-verdict no job 5 is not running\n",
                                   true, exited(0))
                     .ok());
}

TEST(OwnerQuery, RefusalsSayWhy) {
    auto s = judge_owner_query("\nsjail-verdict no job 5 belongs to uid 0, not to uid 5001\n", true,
                               exited(0));
    EXPECT_EQ(s.message(), "job 5 belongs to uid 0, not to uid 5001");
    // A crash of libslurm's plugin loading: the loader's line is shown.
    s = judge_owner_query("sshd: symbol lookup error: hash_k12.so: undefined symbol: "
                          "slurm_get_log_level\n",
                          true, exited(127));
    EXPECT_NE(s.message().find("exit status 127"), std::string::npos);
    EXPECT_NE(s.message().find("undefined symbol: slurm_get_log_level"), std::string::npos);
    s = judge_owner_query("", true, killed(11));
    EXPECT_NE(s.message().find("signal 11"), std::string::npos);
    s = judge_owner_query("", false, killed(9));
    EXPECT_NE(s.message().find("too long"), std::string::npos);
}
