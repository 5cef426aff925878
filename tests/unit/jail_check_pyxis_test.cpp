// SPDX-License-Identifier: Apache-2.0
// slurm-jail-check's pure pyxis and enroot parts: pyxis's plugstack.conf
// lines against chroot.so's, runtime_path's node directory, the jail's
// enroot.conf and GPU hooks (pyxis_needs.hpp).
#include "finding.hpp"
#include "pyxis_needs.hpp"

#include "sjail/core/parse_config.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sjail::check {
namespace {

const char *const kJail = "/mnt/jail";

Config config_of(const std::vector<std::string> &args) {
    const auto parsed = parse_config(args);
    EXPECT_TRUE(parsed.status.ok()) << parsed.status.message();
    return parsed.config;
}

PluginLine line_of(const std::string &origin, const std::string &plugin,
                   const std::vector<std::string> &args) {
    return {origin, true, plugin, args};
}

// The safe arrangement of docs/pyxis.md.
const PluginLine kChroot =
    line_of("plugstack.conf:1", "chroot.so", {"jail=/mnt/jail", "bind=/var/lib/pyxis"});
const PluginLine kPyxis =
    line_of("plugstack.conf:2", "spank_pyxis.so", {"runtime_path=/var/lib/pyxis"});

Config safe_config() {
    return config_of({"jail=/mnt/jail", "bind=/var/lib/pyxis"});
}

std::vector<Finding> line_findings(const PluginLine &pyxis, const Config &config = safe_config()) {
    return pyxis_line_findings({kChroot, pyxis}, config);
}

bool has(const std::string &text, const std::string &part) {
    return text.find(part) != std::string::npos;
}

// ---- pyxis's plugstack.conf lines ----

TEST(PyxisNeeds, TheSafeArrangementPasses) {
    EXPECT_TRUE(line_findings(kPyxis).empty());
    // optional, or a path to the plugin, changes nothing
    auto optional = line_of("p:2", "/usr/lib/slurm/spank_pyxis.so", kPyxis.args);
    optional.required = false;
    EXPECT_TRUE(line_findings(optional).empty());
    // another node directory bound at runtime_path is fine too
    EXPECT_TRUE(
        line_findings(kPyxis, config_of({"jail=/mnt/jail", "bind=/srv/pyxis:/var/lib/pyxis"}))
            .empty());
}

TEST(PyxisNeeds, NoPyxisLineIsNotChecked) {
    EXPECT_TRUE(pyxis_line_findings({kChroot}, config_of({"jail=/mnt/jail"})).empty());
}

TEST(PyxisNeeds, PyxisIsFoundByNameOrPath) {
    EXPECT_TRUE(loads_pyxis(line_of("x", "spank_pyxis.so", {})));
    EXPECT_TRUE(loads_pyxis(line_of("x", "pyxis.so", {})));
    EXPECT_TRUE(loads_pyxis(line_of("x", "/opt/pyxis/lib/spank_pyxis.so", {})));
    EXPECT_FALSE(loads_pyxis(line_of("x", "notpyxis.so", {})));
    EXPECT_FALSE(loads_pyxis(kChroot));
    EXPECT_EQ(pyxis_lines({kChroot, kPyxis}), std::vector<PluginLine>{kPyxis});
}

TEST(PyxisNeeds, SettingsAreReadAsPyxisReadsThemTheLastOneWinning) {
    const auto line = line_of("x", "spank_pyxis.so",
                              {"runtime_path=/a", "container_scope=job", "runtime_path=/b"});
    EXPECT_EQ(pyxis_setting(line, "runtime_path"), "/b");
    EXPECT_EQ(pyxis_setting(line, "container_scope"), "job");
    EXPECT_EQ(pyxis_setting(line, "importer"), std::nullopt);
    EXPECT_EQ(pyxis_runtime_path(line), "/b");
    EXPECT_EQ(pyxis_runtime_path(line_of("x", "spank_pyxis.so", {})), "/run/pyxis");
}

TEST(PyxisNeeds, PyxisBeforeChrootIsAProblem) {
    const auto findings = pyxis_line_findings({kPyxis, kChroot}, safe_config());
    ASSERT_EQ(findings.size(), 1U);
    EXPECT_EQ(findings[0].severity, Severity::Problem);
    EXPECT_EQ(findings[0].cause,
              "plugstack.conf:2: spank_pyxis.so is loaded before chroot.so (plugstack.conf:1): "
              "its callbacks run first, as root on the node's own root instead of in the job's "
              "view of the jail (its mkdir and chown of runtime_path/UID, the enroot it starts)");
    EXPECT_TRUE(has(findings[0].fix, "put chroot.so's line before pyxis's")) << findings[0].fix;
}

TEST(PyxisNeeds, ContainerScopeJobIsAProblem) {
    auto line = kPyxis;
    line.args.emplace_back("container_scope=job");
    const auto findings = line_findings(line);
    ASSERT_EQ(findings.size(), 1U);
    EXPECT_EQ(findings[0].severity, Severity::Problem);
    EXPECT_EQ(findings[0].cause,
              "plugstack.conf:2: container_scope=job: pyxis's SPANK job epilog runs enroot on "
              "the node's own root, where there is no enroot (only the jail has it), so every "
              "job's epilog fails; not supported");
    EXPECT_TRUE(has(findings[0].fix, "remove container_scope=job")) << findings[0].fix;

    line.args.back() = "container_scope=global";
    EXPECT_TRUE(line_findings(line).empty());
}

TEST(PyxisNeeds, TheDefaultRuntimePathIsNotInTheJobsViewAProblemNamingBothLines) {
    const auto findings = line_findings(line_of("plugstack.conf:2", "spank_pyxis.so", {}));
    ASSERT_EQ(findings.size(), 1U);
    EXPECT_EQ(findings[0].severity, Severity::Problem);
    EXPECT_TRUE(has(findings[0].cause, "plugstack.conf:2: spank_pyxis.so has no runtime_path=, "
                                       "and its default /run/pyxis is no bind= target of "
                                       "chroot.so"))
        << findings[0].cause;
    EXPECT_TRUE(has(findings[0].cause, "couldn't mkdir /run/pyxis/UID")) << findings[0].cause;
    EXPECT_TRUE(has(findings[0].fix, "'required chroot.so jail=/mnt/jail ... "
                                     "bind=/var/lib/pyxis' and 'required spank_pyxis.so "
                                     "runtime_path=/var/lib/pyxis'"))
        << findings[0].fix;
    // ... but the default bound by chroot.so is fine
    EXPECT_TRUE(line_findings(line_of("p:2", "spank_pyxis.so", {}),
                              config_of({"jail=/mnt/jail", "bind=/var/lib/pyxis:/run/pyxis"}))
                    .empty());
}

TEST(PyxisNeeds, ARuntimePathThatIsNoBindIsAProblem) {
    for (const char *path : {"/tmp/pyxis", "/home/pyxis", "/var/lib/other"}) {
        const auto findings =
            line_findings(line_of("p:2", "spank_pyxis.so", {std::string("runtime_path=") + path}));
        ASSERT_EQ(findings.size(), 1U) << path;
        EXPECT_EQ(findings[0].severity, Severity::Problem);
        EXPECT_TRUE(has(findings[0].cause, std::string("p:2: runtime_path=") + path +
                                               " is no bind= target of chroot.so, so it lies on "
                                               "the shared jail or in the job's /tmp"))
            << findings[0].cause;
        EXPECT_TRUE(has(findings[0].cause, "gets root over the jail")) << findings[0].cause;
        EXPECT_TRUE(has(findings[0].fix, "runtime_path=/var/lib/pyxis")) << findings[0].fix;
    }
}

TEST(PyxisNeeds, AReadOnlyBindAtRuntimePathIsAProblem) {
    const auto findings =
        line_findings(kPyxis, config_of({"jail=/mnt/jail", "bind=/var/lib/pyxis:ro"}));
    ASSERT_EQ(findings.size(), 1U);
    EXPECT_EQ(findings[0].cause,
              "plugstack.conf:2: runtime_path=/var/lib/pyxis is bound read-only by chroot.so "
              "(bind=/var/lib/pyxis:/var/lib/pyxis:ro): pyxis cannot make /var/lib/pyxis/UID "
              "there, so every pyxis step fails");
    EXPECT_EQ(findings[0].fix, "drop :ro from that bind= of chroot.so");
}

TEST(PyxisNeeds, EveryLineProblemAtOnce) {
    const auto pyxis = line_of("p:1", "spank_pyxis.so", {"container_scope=job"});
    const auto findings = pyxis_line_findings({pyxis, kChroot}, safe_config());
    ASSERT_EQ(findings.size(), 3U);
    EXPECT_TRUE(has(findings[0].cause, "is loaded before chroot.so"));
    EXPECT_TRUE(has(findings[1].cause, "container_scope=job"));
    EXPECT_TRUE(has(findings[2].cause, "has no runtime_path="));
}

// ---- runtime_path's node directory ----

std::vector<NodeDirEntry> safe_way() {
    return {{"/", true, false, true, 0, 0755},
            {"/var", true, false, true, 0, 0755},
            {"/var/lib", true, false, true, 0, 0755},
            {"/var/lib/pyxis", true, false, true, 0, 0755}};
}

TEST(PyxisNeeds, PathAndParentsFromTheRootDown) {
    EXPECT_EQ(path_and_parents("/var/lib/pyxis"),
              (std::vector<std::string>{"/", "/var", "/var/lib", "/var/lib/pyxis"}));
    EXPECT_EQ(path_and_parents("/"), std::vector<std::string>{"/"});
}

TEST(PyxisNeeds, ARootOnlyNodeDirectoryPasses) {
    EXPECT_EQ(runtime_dir_finding("/var/lib/pyxis", safe_way()), std::nullopt);
    // missing: the bind= source check reports it
    auto way = safe_way();
    way.back().exists = false;
    EXPECT_EQ(runtime_dir_finding("/var/lib/pyxis", way), std::nullopt);
}

TEST(PyxisNeeds, ANodeDirectoryNotRootsAllTheWayIsAProblem) {
    struct Case {
        std::size_t index;
        NodeDirEntry change;
        std::string says;
    };
    const std::vector<Case> cases{
        {3,
         {"/var/lib/pyxis", true, false, true, 1000, 0755},
         "/var/lib/pyxis is owned by uid 1000 ("},
        {3,
         {"/var/lib/pyxis", true, false, true, 0, 0775},
         "/var/lib/pyxis is writable by group or others (mode 0775)"},
        {2,
         {"/var/lib", true, false, true, 0, 0757},
         "/var/lib is writable by group or others (mode 0757)"},
        {1, {"/var", true, false, true, 5, 0755}, "/var is owned by uid 5 ("},
        {2, {"/var/lib", true, true, false, 0, 0777}, "/var/lib is a symlink"},
        {3, {"/var/lib/pyxis", true, false, false, 0, 0644}, "/var/lib/pyxis is not a directory"},
    };
    for (const auto &c : cases) {
        auto way = safe_way();
        way[c.index] = c.change;
        const auto finding = runtime_dir_finding("/var/lib/pyxis", way);
        ASSERT_TRUE(finding) << c.says;
        EXPECT_EQ(finding->severity, Severity::Problem);
        EXPECT_TRUE(
            has(finding->cause, "pyxis's runtime_path=/var/lib/pyxis: on this node " + c.says))
            << finding->cause;
        EXPECT_TRUE(has(finding->cause, "pyxis, as root, makes runtime_path/UID there and "
                                        "chowns what it finds"))
            << finding->cause;
        EXPECT_TRUE(has(finding->cause, c.index == 3 ? "(the node directory chroot.so binds there)"
                                                     : "(above /var/lib/pyxis, which chroot.so "
                                                       "binds there)"))
            << finding->cause;
        const std::string fix =
            c.change.directory && !c.change.symlink
                ? "chown root:root " + c.change.path + "; chmod go-w " + c.change.path
                : "replace " + c.change.path + " with a real directory";
        EXPECT_EQ(finding->fix.rfind(fix, 0), 0U) << finding->fix;
    }
}

// ---- the jail's enroot ----

const char *const kOurEnrootConf = "# comment\n"
                                   "ENROOT_RUNTIME_PATH         /tmp/enroot-${UID}/runtime\n"
                                   "ENROOT_CACHE_PATH           /tmp/enroot-${UID}/cache\n"
                                   "ENROOT_DATA_PATH            /tmp/enroot-${UID}/data\n"
                                   "ENROOT_TEMP_PATH            /tmp\n"
                                   "ENROOT_ROOTFS_WRITABLE      yes\n";

EnrootFacts ready_enroot() {
    EnrootFacts facts;
    facts.conf = kOurEnrootConf;
    facts.jail_gpu_hook = true;
    facts.node_gpu_driver = true;
    return facts;
}

TEST(PyxisNeeds, EnrootConfIsReadAsEnrootReadsIt) {
    const auto conf = parse_enroot_conf("  # a comment\n"
                                        "\n"
                                        "ENROOT_DATA_PATH\t/tmp/enroot-${UID}/data   # trailing\n"
                                        "ENROOT_DATA_PATH /home/second/wins/not\n"
                                        "ENROOT_CACHE_PATH \"/tmp/quoted\"\r\n"
                                        "ENROOT_MOUNT_HOME\n"
                                        "ENROOT_SQUASH_OPTIONS -comp#zstd");
    EXPECT_EQ(conf.at("ENROOT_DATA_PATH"), "/tmp/enroot-${UID}/data");
    EXPECT_EQ(conf.at("ENROOT_CACHE_PATH"), "/tmp/quoted");
    EXPECT_EQ(conf.at("ENROOT_MOUNT_HOME"), "");
    EXPECT_EQ(conf.at("ENROOT_SQUASH_OPTIONS"), "-comp#zstd");
    EXPECT_EQ(conf.size(), 4U);
}

TEST(PyxisNeeds, OnlyTheJobsTmpIsBelowTmp) {
    EXPECT_TRUE(below_job_tmp("/tmp"));
    EXPECT_TRUE(below_job_tmp("/tmp/enroot-${UID}/data"));
    EXPECT_FALSE(below_job_tmp("/tmpx/data"));
    EXPECT_FALSE(below_job_tmp("/tmp/../home/data"));
    EXPECT_FALSE(below_job_tmp("${HOME}/.local/share/enroot"));
    EXPECT_FALSE(below_job_tmp("/var/tmp/enroot"));
}

TEST(PyxisNeeds, TheJailsOwnEnrootSetupPasses) {
    EXPECT_TRUE(enroot_findings(kJail, ready_enroot()).empty());
    auto facts = ready_enroot();
    facts.jail_gpu_hook = false;
    facts.node_gpu_driver = false; // no driver, no hook needed
    EXPECT_TRUE(enroot_findings(kJail, facts).empty());
}

TEST(PyxisNeeds, EnrootPathsOutsideTheJobsTmpAreOneWarning) {
    auto facts = ready_enroot();
    facts.conf = "ENROOT_CACHE_PATH /home/shared/enroot\nENROOT_DATA_PATH /tmp/enroot/data\n";
    const auto findings = enroot_findings(kJail, facts);
    ASSERT_EQ(findings.size(), 1U);
    EXPECT_EQ(findings[0].severity, Severity::Warning);
    EXPECT_EQ(findings[0].cause,
              "/mnt/jail/etc/enroot/enroot.conf puts enroot's files outside the job's /tmp "
              "(ENROOT_RUNTIME_PATH unset (enroot's default: ${XDG_RUNTIME_DIR}/enroot, "
              "/run/enroot under pyxis, not the user's); ENROOT_CACHE_PATH "
              "/home/shared/enroot): unpacked images (tens of thousands of files) land on the "
              "shared jail, meet other nodes' and outlive the job, or enroot fails");
    EXPECT_EQ(findings[0].fix.rfind("install images/jail/enroot/enroot.conf as "
                                    "/mnt/jail/etc/enroot/enroot.conf",
                                    0),
              0U)
        << findings[0].fix;

    facts.conf.reset();
    const auto missing = enroot_findings(kJail, facts);
    ASSERT_EQ(missing.size(), 1U);
    EXPECT_TRUE(has(missing[0].cause, "the jail has no root-owned "
                                      "/mnt/jail/etc/enroot/enroot.conf, so enroot puts its files "
                                      "outside the job's /tmp"))
        << missing[0].cause;
    EXPECT_TRUE(has(missing[0].cause, "ENROOT_DATA_PATH unset (enroot's default: "
                                      "~/.local/share/enroot, in the home)"))
        << missing[0].cause;
}

TEST(PyxisNeeds, EnrootsOwnGpuHookIsAWarning) {
    auto facts = ready_enroot();
    facts.stock_gpu_hook = true;
    const auto findings = enroot_findings(kJail, facts);
    ASSERT_EQ(findings.size(), 1U);
    EXPECT_EQ(findings[0].severity, Severity::Warning);
    EXPECT_EQ(findings[0].cause.rfind("/mnt/jail/etc/enroot/hooks.d/98-nvidia.sh is enroot's "
                                      "own GPU hook: it runs nvidia-container-cli",
                                      0),
              0U)
        << findings[0].cause;
    EXPECT_EQ(findings[0].fix.rfind("rm /mnt/jail/etc/enroot/hooks.d/98-nvidia.sh", 0), 0U)
        << findings[0].fix;
}

TEST(PyxisNeeds, OurGpuHookMissingOnAGpuNodeIsAWarning) {
    auto facts = ready_enroot();
    facts.jail_gpu_hook = false;
    const auto findings = enroot_findings(kJail, facts);
    ASSERT_EQ(findings.size(), 1U);
    EXPECT_EQ(findings[0].severity, Severity::Warning);
    EXPECT_EQ(findings[0].cause,
              "this node has an NVIDIA driver, but the jail has no executable "
              "/mnt/jail/etc/enroot/hooks.d/50-slurm-jail-nvidia.sh: containers that enroot "
              "(pyxis) starts get neither the driver nor the GPUs");
    EXPECT_EQ(findings[0].fix, "install -m 0755 images/jail/enroot/hooks.d/50-slurm-jail-nvidia.sh "
                               "/mnt/jail/etc/enroot/hooks.d/");
}

TEST(PyxisNeeds, EveryEnrootGapAtOnce) {
    EnrootFacts facts;
    facts.stock_gpu_hook = true;
    facts.node_gpu_driver = true;
    const auto findings = enroot_findings(kJail, facts);
    ASSERT_EQ(findings.size(), 3U);
    for (const auto &f : findings) {
        EXPECT_EQ(f.severity, Severity::Warning) << f.cause;
    }
}

} // namespace
} // namespace sjail::check
