// SPDX-License-Identifier: Apache-2.0
// Root-level: the gpu= settings end to end through the plugin's own node
// namespace (acquire_node_namespace, the builder, enter_node_jail): a step
// on a node with the fake driver finds it by name in the jail, each node
// sees its own driver, an upgrade or a jail package install rebuilds the
// view, a missing or unbindable driver fails closed, and the jail's files
// never change.
#include "gpu_sandbox.hpp"
#include "gpu_step.hpp"
#include "ldconfig_fixture.hpp"
#include "sandbox.hpp"
#include "sjail/core/gpu/ld_cache.hpp"
#include "sjail/sys/job/step_entry.hpp"
#include "sjail/sys/node/node_namespace.hpp"
#include "sjail/sys/small_file.hpp"
#include "sjail/sys/state_dir.hpp"

#include <fcntl.h>
#include <filesystem>
#include <functional>
#include <gtest/gtest.h>
#include <map>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;
using gpu_step::expect_driver;
using gpu_step::kLib64;
using gpu_step::run_as_step;
using kit::in_child;
using sjail::Config;

namespace {

const std::string kJail = "/mnt/jail";
const std::string kDriver = "/mnt/node/nvidia"; // the container toolkit's layout

bool contains(const std::string &text, const std::string &part) {
    return text.find(part) != std::string::npos;
}

// `text` at `path`, its directories made first.
void write_at(const std::string &path, const std::string &text) {
    fixture::make_dirs(fs::path(path).parent_path().string());
    fixture::write_text(path, text);
}

// A sandbox node (sandbox::make_node) whose jail is ready for loader tests,
// with the fake driver `version` at kDriver (none when empty) and
// gpu=`mode` gpu_driver_root=kDriver.
std::string make_gpu_node(Config &config, const std::string &version, sjail::GpuMode mode) {
    if (auto e = sandbox::make_node(config); !e.empty()) {
        return e;
    }
    gpu_sandbox::ready_jail(kJail);
    gpu_step::add_nvidia_smi_link(kJail);
    fixture::make_dirs(kDriver);
    if (!version.empty()) {
        gpu_sandbox::make_toolkit_root(kDriver, version);
    }
    config.gpu = mode;
    config.gpu_driver_root = kDriver;
    config.gpu_mps_dir = "/mnt/node/nvidia-mps";
    return "";
}

// What the kept namespace was built from (namespace ids are reused once
// freed, so they cannot tell a rebuild).
std::string kept_stamp(const Config &config) {
    return sjail::read_small_file(config.state_dir + "/stamp");
}

// Replaces the driver under kDriver as an installer would: old files out, new in.
void upgrade_driver(const std::string &version) {
    fs::remove_all(kDriver + "/lib64");
    fs::remove_all(kDriver + "/bin");
    gpu_sandbox::make_toolkit_root(kDriver, version);
}

} // namespace

TEST(GpuNamespace, AStepFindsTheNodesDriverByNameAndTheJailIsUntouched) {
    EXPECT_EQ(in_child([] {
                  Config config;
                  if (auto e = make_gpu_node(config, "550.54.15", sjail::GpuMode::On); !e.empty()) {
                      return e;
                  }
                  const auto before = gpu_sandbox::snapshot(kJail);
                  if (auto e = expect_driver(config, "550.54.15", "12040"); !e.empty()) {
                      return e;
                  }
                  if (auto e = gpu_step::jail_changes(kJail, before); !e.empty()) {
                      return e;
                  }
                  // What was bound is recorded, node-local, for the admin.
                  const std::string report = kit::read_file(config.state_dir + "/gpu");
                  CHILD_EXPECT(contains(report, "gpu=on: NVIDIA driver 550.54.15 found under " +
                                                    kDriver + ", bound at /usr/local/nvidia"));
                  CHILD_EXPECT(contains(report, kLib64 + "/libcuda.so.550.54.15 <- " + kDriver +
                                                    "/lib64/libcuda.so.550.54.15 (links: "
                                                    "libcuda.so libcuda.so.1)"));
                  CHILD_EXPECT(contains(report, "/usr/local/nvidia/bin/nvidia-smi <- " + kDriver +
                                                    "/bin/nvidia-smi"));
                  CHILD_EXPECT(contains(report, "/etc/ld.so.cache <- " + config.state_dir +
                                                    "/ld.so.cache (ldconfig over the view, "));
                  // The node-local cache lists the driver ahead of the jail's libraries.
                  sjail::LdCache cache;
                  CHILD_EXPECT(sjail::parse_ld_cache(
                                   fixture::read_bytes(config.state_dir + "/ld.so.cache"), cache)
                                   .ok());
                  const auto *cuda =
                      sjail::find_ld_cache_entry(cache, "libcuda.so.1", sjail::kBuildArch);
                  CHILD_EXPECT(cuda != nullptr && cuda->path == kLib64 + "/libcuda.so.1");
                  return std::string();
              }),
              "");
}

TEST(GpuNamespace, TheViewsDriverTreeAndLoaderCacheAreReadOnly) {
    EXPECT_EQ(in_child([] {
                  Config config;
                  if (auto e = make_gpu_node(config, "580.159.04", sjail::GpuMode::Auto);
                      !e.empty()) {
                      return e;
                  }
                  return in_child([&] {
                      if (auto s = sjail::enter_node_jail(config); !s.ok()) {
                          return "enter: " + s.message();
                      }
                      // Even root in the job cannot change what the node bound in.
                      CHILD_EXPECT(
                          ::open("/usr/local/nvidia/lib64/libx.so", O_CREAT | O_WRONLY, 0644) < 0 &&
                          errno == EROFS);
                      CHILD_EXPECT(::open("/etc/ld.so.cache", O_WRONLY) < 0 && errno == EROFS);
                      CHILD_EXPECT(
                          ::open("/usr/local/nvidia/lib64/libcuda.so.580.159.04", O_WRONLY) < 0 &&
                          errno == EROFS);
                      return std::string();
                  });
              }),
              "");
}

TEST(GpuNamespace, TwoNodesShareOneJailEachWithItsOwnDriver) {
    EXPECT_EQ(in_child([] {
                  Config one;
                  if (auto e = make_gpu_node(one, "550.54.15", sjail::GpuMode::On); !e.empty()) {
                      return e;
                  }
                  // A second node: its own state directory and driver, the same jail.
                  Config two = one;
                  two.state_dir = "/mnt/node2/state";
                  two.gpu_driver_root = "/mnt/node2/nvidia";
                  gpu_sandbox::make_toolkit_root(two.gpu_driver_root, "580.159.04");
                  const auto before = gpu_sandbox::snapshot(kJail);
                  if (auto e = expect_driver(one, "550.54.15", "12040"); !e.empty()) {
                      return "node 1: " + e;
                  }
                  if (auto e = expect_driver(two, "580.159.04", "13000"); !e.empty()) {
                      return "node 2: " + e;
                  }
                  // Both namespaces are kept at once; node 1 still sees its own.
                  CHILD_EXPECT(!kept_stamp(one).empty() && !kept_stamp(two).empty());
                  if (auto e = expect_driver(one, "550.54.15", "12040"); !e.empty()) {
                      return "node 1 again: " + e;
                  }
                  return gpu_step::jail_changes(kJail, before);
              }),
              "");
}

TEST(GpuNamespace, AnUpgradeIsSeenByTheNextStepWhileRunningStepsKeepTheirs) {
    EXPECT_EQ(in_child([] {
                  Config config;
                  if (auto e = make_gpu_node(config, "550.54.15", sjail::GpuMode::On); !e.empty()) {
                      return e;
                  }
                  if (auto e = expect_driver(config, "550.54.15", "12040"); !e.empty()) {
                      return e;
                  }
                  // A running step holds the old namespace.
                  sjail::NodeNamespace running;
                  CHILD_EXPECT(sjail::acquire_node_namespace(config, running).ok());
                  const std::string old_stamp = kept_stamp(config);
                  upgrade_driver("580.159.04");
                  if (auto e = expect_driver(config, "580.159.04", "13000"); !e.empty()) {
                      return "after the upgrade: " + e;
                  }
                  CHILD_EXPECT(kept_stamp(config) != old_stamp);
                  CHILD_EXPECT(contains(kept_stamp(config), "nvidia-driver 580.159.04\n"));
                  // The running step's view still has the driver it started with.
                  return in_child([&] {
                      if (auto s = sjail::enter_namespace(running.fd.get()); !s.ok()) {
                          return s.message();
                      }
                      std::string out;
                      CHILD_EXPECT(fixture::run({"/usr/local/nvidia/bin/nvidia-smi"}, &out) == 0);
                      CHILD_EXPECT(contains(out, "Driver Version: 550.54.15"));
                      return std::string();
                  });
              }),
              "");
}

TEST(GpuNamespace, AnUnchangedNodeKeepsItsNamespaceAndAJailPackageInstallRebuildsIt) {
    EXPECT_EQ(in_child([] {
                  Config config;
                  if (auto e = make_gpu_node(config, "580.159.04", sjail::GpuMode::Auto);
                      !e.empty()) {
                      return e;
                  }
                  if (auto e = expect_driver(config, "580.159.04", "13000"); !e.empty()) {
                      return e;
                  }
                  const std::string first = kept_stamp(config);
                  std::string out;
                  CHILD_EXPECT(run_as_step(config, {"nvidia-smi"}, out) == 0);
                  CHILD_EXPECT(kept_stamp(config) == first);
                  // A package install in the jail (elsewhere) runs the jail's
                  // ldconfig, of the build's architecture, there: the jail's
                  // cache is a new file, so the node-local one is rebuilt.
                  std::vector<std::string> ldconfig = fixture::ldconfig_argv();
                  ldconfig.insert(ldconfig.end(), {"-r", kJail});
                  CHILD_EXPECT(fixture::run(ldconfig, &out) == 0);
                  if (auto e = expect_driver(config, "580.159.04", "13000"); !e.empty()) {
                      return "after ldconfig in the jail: " + e;
                  }
                  CHILD_EXPECT(kept_stamp(config) != first);
                  CHILD_EXPECT(contains(kept_stamp(config), "jail-ld.so.cache dev="));
                  return std::string();
              }),
              "");
}

TEST(GpuNamespace, NoDriverIsFineInAutoAndFailsClosedInOnWithOneLine) {
    EXPECT_EQ(
        in_child([] {
            Config config;
            if (auto e = make_gpu_node(config, "", sjail::GpuMode::Auto); !e.empty()) {
                return e;
            }
            std::string out;
            // auto: the job runs, with no driver, and the jail's own cache.
            CHILD_EXPECT(run_as_step(config, {"fake_nvidia_dlopen_probe"}, out) == 1);
            CHILD_EXPECT(contains(out, "libcuda.so.1: cannot open shared object file"));
            CHILD_EXPECT(kit::read_file(config.state_dir + "/gpu") ==
                         "gpu=auto: no NVIDIA driver bound\n");
            // on: no step starts, and the reason is one line.
            config.gpu = sjail::GpuMode::On;
            sjail::NodeNamespace node;
            const auto s = sjail::acquire_node_namespace(config, node);
            CHILD_EXPECT(!s.ok() && !node.fd.valid());
            CHILD_EXPECT(contains(s.message(), "no NVIDIA driver found on this node (gpu=on)"));
            CHILD_EXPECT(contains(s.message(),
                                  "in: " + kDriver +
                                      ": no etc/ld.so.cache, lib64/ or lib/; install the driver"));
            CHILD_EXPECT(s.message().find('\n') == std::string::npos);
            CHILD_EXPECT(run_as_step(config, {"nvidia-smi"}, out) == 125);
            // gpu=off: nothing is looked for.
            gpu_sandbox::make_toolkit_root(kDriver, "550.54.15");
            config.gpu = sjail::GpuMode::Off;
            CHILD_EXPECT(run_as_step(config, {"fake_nvidia_dlopen_probe"}, out) == 1);
            return std::string();
        }),
        "");
}

TEST(GpuNamespace, ABuildKeepsTheNodesLoaderCacheMemoAndStepsReuseIt) {
    EXPECT_EQ(
        in_child([] {
            Config config;
            if (auto e = make_gpu_node(config, "", sjail::GpuMode::Auto); !e.empty()) {
                return e;
            }
            // A node root with a loader cache and no driver.
            config.gpu_driver_root = "/mnt/node/root";
            gpu_sandbox::make_node_root(config.gpu_driver_root);
            std::string out;
            // No driver on this node: the probe runs and finds no libcuda.
            CHILD_EXPECT(run_as_step(config, {"fake_nvidia_dlopen_probe"}, out) == 1);
            const std::string memo = kit::read_file(config.state_dir + "/driver-memo");
            CHILD_EXPECT(memo.starts_with(
                "slurm-jail driver memo v1\nld.so.cache /mnt/node/root/etc/ld.so.cache dev="));
            // The cache's identity is part of the stamp: a new node cache rebuilds.
            const std::string first = kept_stamp(config);
            CHILD_EXPECT(contains(first, memo));
            CHILD_EXPECT(run_as_step(config, {"fake_nvidia_dlopen_probe"}, out) == 1);
            CHILD_EXPECT(kept_stamp(config) == first);
            CHILD_EXPECT(kit::read_file(config.state_dir + "/driver-memo") == memo);
            return std::string();
        }),
        "");
}

TEST(GpuNamespace, ADriverTheJailCannotTakeFailsClosed) {
    EXPECT_EQ(
        in_child([] {
            Config config;
            if (auto e = make_gpu_node(config, "550.54.15", sjail::GpuMode::Auto); !e.empty()) {
                return e;
            }
            // A jail image without the mount point: found but not bindable.
            fs::remove(kJail + "/usr/local/nvidia");
            std::string out;
            CHILD_EXPECT(run_as_step(config, {"nvidia-smi"}, out) == 125);
            CHILD_EXPECT(contains(out, "binding the node's NVIDIA driver into the jail: "
                                       "the NVIDIA driver tree: mount point "
                                       "/usr/local/nvidia is missing inside the jail"));
            CHILD_EXPECT(contains(out, "set gpu=off"));
            CHILD_EXPECT(sjail::read_small_file(config.state_dir + "/stamp").empty());
            // A half-done upgrade (libcuda and NVML of two versions) is refused too.
            fixture::make_dirs(kJail + "/usr/local/nvidia");
            fixture::install_fake_libs("580.159.04", kDriver + "/lib64-new");
            fs::remove(kDriver + "/lib64/libnvidia-ml.so.1");
            fs::copy(kDriver + "/lib64-new/libnvidia-ml.so.580.159.04", kDriver + "/lib64");
            fs::create_symlink("libnvidia-ml.so.580.159.04", kDriver + "/lib64/libnvidia-ml.so.1");
            fs::remove_all(kDriver + "/lib64-new");
            CHILD_EXPECT(run_as_step(config, {"nvidia-smi"}, out) == 125);
            CHILD_EXPECT(contains(out, "an upgrade half done"));
            return std::string();
        }),
        "");
}

TEST(GpuNamespace, DaemonSocketDirectoriesNeedNoMountPointInTheJailWithRunNode) {
    EXPECT_EQ(in_child([] {
                  Config config;
                  if (auto e = make_gpu_node(config, "550.54.15", sjail::GpuMode::On); !e.empty()) {
                      return e;
                  }
                  // nvidia-persistenced runs in the driver root; the jail has no
                  // /run/nvidia-persistenced, and a user planted a link there.
                  fixture::make_dirs(kDriver + "/run/nvidia-persistenced");
                  fixture::write_text(kDriver + "/run/nvidia-persistenced/socket", "node daemon");
                  fs::remove_all(kJail + "/run/nvidia-persistenced");
                  fs::create_symlink("/etc", kJail + "/run/nvidia-fabricmanager");
                  const auto before = gpu_sandbox::snapshot(kJail);
                  std::string seen = in_child([&] {
                      if (auto s = sjail::enter_node_jail(config); !s.ok()) {
                          return "enter: " + s.message();
                      }
                      CHILD_EXPECT(kit::read_file("/run/nvidia-persistenced/socket") ==
                                   "node daemon");
                      return std::string();
                  });
                  if (!seen.empty()) {
                      return seen;
                  }
                  if (auto e = gpu_step::jail_changes(kJail, before); !e.empty()) {
                      return e;
                  }
                  CHILD_EXPECT(!fs::exists(kJail + "/run/nvidia-persistenced"));
                  const std::string report = kit::read_file(config.state_dir + "/gpu");
                  CHILD_EXPECT(contains(report, "/run/nvidia-persistenced <- " + kDriver +
                                                    "/run/nvidia-persistenced"));
                  CHILD_EXPECT(!contains(report, "the jail has no /run/"));
                  return std::string();
              }),
              "");
}

// A jail built from a node image has the driver's graphics data files as
// symlinks into the driver tree (Ubuntu's GPU images: EGL and Vulkan), or
// a file of the wrong kind: each is optional, skipped with a note in
// STATE/gpu and never followed, and steps enter with CUDA and NVML found,
// with gpu=on as with gpu=auto.
TEST(GpuNamespace, OptionalDataFilesWhoseMountPointIsASymlinkOrOfTheWrongKindAreSkipped) {
    for (const auto mode : {sjail::GpuMode::On, sjail::GpuMode::Auto}) {
        EXPECT_EQ(in_child([mode] {
                      Config config;
                      if (auto e = make_gpu_node(config, "580.159.04", mode); !e.empty()) {
                          return e;
                      }
                      const std::string egl = "/usr/share/glvnd/egl_vendor.d/10_nvidia.json";
                      const std::string vulkan = "/usr/share/vulkan/icd.d/nvidia_icd.json";
                      write_at(kDriver + "/share/glvnd/egl_vendor.d/10_nvidia.json", "egl");
                      write_at(kDriver + "/share/vulkan/icd.d/nvidia_icd.json", "vulkan");
                      write_at(kDriver + "/share/nvidia/nvoptix.bin", "optix");
                      fixture::make_dirs(kJail + "/usr/share/glvnd/egl_vendor.d");
                      fixture::make_dirs(kJail + "/usr/share/vulkan/icd.d");
                      // As the field's images have them: links into the driver tree,
                      // and one aimed at another file of the jail.
                      fs::create_symlink(
                          "/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json", kJail + egl);
                      fixture::write_text(kJail + "/etc/shadow", "the jail's own");
                      gpu_step::add_cat(kJail);
                      fs::create_symlink("/etc/shadow", kJail + vulkan);
                      fs::remove(kJail + "/usr/share/nvidia/nvoptix.bin");
                      fixture::make_dirs(kJail + "/usr/share/nvidia/nvoptix.bin");
                      const auto before = gpu_sandbox::snapshot(kJail);
                      if (auto e = expect_driver(config, "580.159.04", "13000"); !e.empty()) {
                          return e;
                      }
                      // Had the link been followed, the node's file would be there.
                      std::string out;
                      CHILD_EXPECT(run_as_step(config, {"cat", "/etc/shadow"}, out) == 0);
                      CHILD_EXPECT(out == "the jail's own");
                      if (auto e = gpu_step::jail_changes(kJail, before); !e.empty()) {
                          return e;
                      }
                      const std::string report = kit::read_file(config.state_dir + "/gpu");
                      CHILD_EXPECT(contains(report, "note: skipped the node's " + kDriver +
                                                        "/share/glvnd/egl_vendor.d/10_nvidia.json "
                                                        "(optional): "));
                      CHILD_EXPECT(contains(report, "is a symlink"));
                      CHILD_EXPECT(contains(report, "if jobs need it, make " + vulkan +
                                                        " in the jail image a root-owned file"));
                      CHILD_EXPECT(contains(report, "note: skipped the node's " + kDriver +
                                                        "/share/nvidia/nvoptix.bin (optional): "));
                      CHILD_EXPECT(!contains(report, egl + " <- "));
                      CHILD_EXPECT(!contains(report, vulkan + " <- "));
                      return std::string();
                  }),
                  "")
            << sjail::gpu_mode_name(mode);
    }
}
