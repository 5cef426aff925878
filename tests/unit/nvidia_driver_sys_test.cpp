// SPDX-License-Identifier: Apache-2.0
// Root-level: finding the fake NVIDIA driver on a sandbox node, and refusing
// one that a user could have planted or redirected.
#include "gpu_sandbox.hpp"
#include "ldconfig_fixture.hpp"
#include "sandbox.hpp"
#include "sjail/core/arch.hpp"
#include "sjail/core/gpu/driver_memo.hpp"
#include "sjail/sys/gpu/nvidia_driver.hpp"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

namespace fs = std::filesystem;
using kit::in_child;
using sjail::DriverFile;
using sjail::DriverFileKind;
using sjail::DriverSearch;
using sjail::GpuMode;
using sjail::NodeDriver;

namespace {

const std::string kNode = "/mnt/node-root";
// The node's multiarch directory (usr/lib/aarch64-linux-gnu on an arm64 build).
const std::string kNodeLib = kNode + fixture::kMultiarchLib;
const std::string kToolkit = "/mnt/toolkit";

// Runs `check` in a child with a private tmpfs on /mnt.
std::string on_mnt(const std::function<std::string()> &check) {
    return in_child([&] {
        if (auto e = kit::private_node_namespace("gpu-sandbox", kit::HostMounts::Slave);
            !e.empty()) {
            return e;
        }
        return check();
    });
}

DriverSearch search(std::vector<std::string> roots, GpuMode mode = GpuMode::On) {
    DriverSearch s;
    s.mode = mode;
    s.roots = std::move(roots);
    s.mps_pipe_dir = "/mnt/no-mps";
    return s;
}

std::string discover(const DriverSearch &s, NodeDriver &out) {
    const auto status = sjail::discover_node_driver(s, out);
    return status.ok() ? "" : status.message();
}

const DriverFile *file_named(const NodeDriver &d, const std::string &name) {
    for (const auto &f : d.files) {
        if (f.name == name || f.view_path == name) {
            return &f;
        }
    }
    return nullptr;
}

bool contains(const std::string &text, const std::string &part) {
    return text.find(part) != std::string::npos;
}

} // namespace

TEST(GpuDiscover, FindsTheDriverThroughTheNodesLoaderCache) {
    EXPECT_EQ(on_mnt([] {
                  gpu_sandbox::make_node_root(kNode);
                  gpu_sandbox::install_driver_in_root(kNode, "550.54.15");
                  NodeDriver d;
                  if (auto e = discover(search({kNode}), d); !e.empty()) {
                      return e;
                  }
                  CHILD_EXPECT(d.found() && d.version == "550.54.15" && d.root == kNode);
                  CHILD_EXPECT(d.files.size() == d.fds.size());
                  const auto *cuda = file_named(d, "libcuda.so.550.54.15");
                  CHILD_EXPECT(cuda != nullptr && cuda->kind == DriverFileKind::Library);
                  // Reached through the root-owned lib -> usr/lib link of merged /usr.
                  CHILD_EXPECT(cuda->node_path == kNodeLib + "/libcuda.so.550.54.15");
                  CHILD_EXPECT(
                      (cuda->links == std::vector<std::string>{"libcuda.so.1"}) ||
                      (cuda->links == std::vector<std::string>{"libcuda.so", "libcuda.so.1"}));
                  CHILD_EXPECT(file_named(d, "libnvidia-ml.so.550.54.15") != nullptr);
                  CHILD_EXPECT(file_named(d, "libnvidia-ptxjitcompiler.so.550.54.15") != nullptr);
                  CHILD_EXPECT(file_named(d, "libc.so.6") == nullptr);
                  const auto *smi = file_named(d, "nvidia-smi");
                  CHILD_EXPECT(smi != nullptr && smi->kind == DriverFileKind::Binary);
                  CHILD_EXPECT(smi->node_path == kNode + "/usr/bin/nvidia-smi");
                  CHILD_EXPECT(d.files.size() == 4U);
                  // The fds are the files that were checked.
                  for (std::size_t i = 0; i < d.files.size(); ++i) {
                      struct stat st {};
                      CHILD_EXPECT(::fstat(d.fds[i].get(), &st) == 0);
                      CHILD_EXPECT(st.st_ino == d.files[i].identity.ino);
                      CHILD_EXPECT(::stat(d.files[i].node_path.c_str(), &st) == 0 &&
                                   st.st_ino == d.files[i].identity.ino);
                  }
                  return std::string();
              }),
              "");
}

TEST(GpuDiscover, FindsAToolkitStyleDriverRootAfterEmptyOnes) {
    EXPECT_EQ(
        on_mnt([] {
            gpu_sandbox::make_node_root(kNode); // a node without a driver
            gpu_sandbox::make_toolkit_root(kToolkit, "580.159.04");
            NodeDriver d;
            if (auto e = discover(search({kNode, "/mnt/absent", kToolkit}), d); !e.empty()) {
                return e;
            }
            CHILD_EXPECT(d.version == "580.159.04" && d.root == kToolkit);
            const auto *cuda = file_named(d, "libcuda.so.580.159.04");
            CHILD_EXPECT(cuda != nullptr &&
                         cuda->node_path == kToolkit + "/lib64/libcuda.so.580.159.04");
            // A listing sees every link, the development link too.
            CHILD_EXPECT((cuda->links == std::vector<std::string>{"libcuda.so", "libcuda.so.1"}));
            const auto *smi = file_named(d, "nvidia-smi");
            CHILD_EXPECT(smi != nullptr && smi->node_path == kToolkit + "/bin/nvidia-smi");
            return std::string();
        }),
        "");
}

TEST(GpuDiscover, NoDriverIsFineInAutoAndAnErrorThatSaysWhereInOn) {
    EXPECT_EQ(on_mnt([] {
                  gpu_sandbox::make_node_root(kNode);
                  NodeDriver d;
                  CHILD_EXPECT(discover(search({kNode, kToolkit}, GpuMode::Auto), d).empty());
                  CHILD_EXPECT(!d.found() && d.files.empty());
                  const std::string e = discover(search({kNode, kToolkit}), d);
                  CHILD_EXPECT(contains(e, "no NVIDIA driver found"));
                  CHILD_EXPECT(contains(e, kNode + ": its etc/ld.so.cache lists no libcuda.so.1"));
                  CHILD_EXPECT(contains(e, kToolkit + ": does not exist"));
                  CHILD_EXPECT(discover(search({kNode}, GpuMode::Off), d).empty() && !d.found());
                  return std::string();
              }),
              "");
}

TEST(GpuDiscover, RefusesADriverDirectoryThatAUserControls) {
    EXPECT_EQ(on_mnt([] {
                  gpu_sandbox::make_node_root(kNode);
                  gpu_sandbox::install_driver_in_root(kNode, "550.54.15");
                  NodeDriver d;
                  CHILD_EXPECT(::chown(kNodeLib.c_str(), 1000, 1000) == 0);
                  for (const auto mode : {GpuMode::Auto, GpuMode::On}) {
                      const std::string e = discover(search({kNode}, mode), d);
                      CHILD_EXPECT(contains(e, "refusing the NVIDIA driver under " + kNode));
                      CHILD_EXPECT(contains(e, kNodeLib + " is owned by uid 1000, not root"));
                      CHILD_EXPECT(!d.found());
                  }
                  CHILD_EXPECT(::chown(kNodeLib.c_str(), 0, 0) == 0);
                  CHILD_EXPECT(::chmod(kNodeLib.c_str(), 0775) == 0);
                  const std::string e = discover(search({kNode}), d);
                  CHILD_EXPECT(contains(e, kNodeLib + " is writable by group or others"));
                  CHILD_EXPECT(::chmod(kNodeLib.c_str(), 0755) == 0);
                  // A driver root that a user owns is refused before anything in it is read.
                  gpu_sandbox::make_toolkit_root(kToolkit, "550.54.15");
                  CHILD_EXPECT(::chown(kToolkit.c_str(), 1000, 1000) == 0);
                  CHILD_EXPECT(contains(discover(search({kToolkit}), d),
                                        "refusing the driver root " + kToolkit));
                  return std::string();
              }),
              "");
}

TEST(GpuDiscover, RefusesAUserOwnedLibraryOrBinary) {
    EXPECT_EQ(
        on_mnt([] {
            gpu_sandbox::make_node_root(kNode);
            gpu_sandbox::install_driver_in_root(kNode, "550.54.15");
            NodeDriver d;
            const std::string lib = kNodeLib + "/libnvidia-ml.so.550.54.15";
            CHILD_EXPECT(::chown(lib.c_str(), 1000, 0) == 0);
            CHILD_EXPECT(contains(discover(search({kNode}), d), lib + " is owned by uid 1000"));
            CHILD_EXPECT(::chown(lib.c_str(), 0, 0) == 0);
            const std::string smi = kNode + "/usr/bin/nvidia-smi";
            CHILD_EXPECT(::chmod(smi.c_str(), 0777) == 0);
            CHILD_EXPECT(
                contains(discover(search({kNode}), d), smi + " is writable by group or others"));
            return std::string();
        }),
        "");
}

TEST(GpuDiscover, RefusesASonameLinkThatLeavesTheDriversDirectory) {
    EXPECT_EQ(on_mnt([] {
                  gpu_sandbox::make_node_root(kNode);
                  gpu_sandbox::install_driver_in_root(kNode, "550.54.15");
                  fixture::install_fake_libs("550.54.15", "/mnt/elsewhere");
                  const std::string link = kNodeLib + "/libcuda.so.1";
                  NodeDriver d;
                  for (const std::string target :
                       {"/mnt/elsewhere/libcuda.so.550.54.15",
                        "../../../../mnt/elsewhere/libcuda.so.1", "./libcuda.so.550.54.15"}) {
                      fs::remove(link);
                      fs::create_symlink(target, link);
                      const std::string e = discover(search({kNode}), d);
                      CHILD_EXPECT(
                          contains(e, link + " links to " + target + ", outside " + kNodeLib));
                      CHILD_EXPECT(!d.found());
                  }
                  return std::string();
              }),
              "");
}

TEST(GpuDiscover, RefusesAUsersSymlinkOnTheWay) {
    EXPECT_EQ(on_mnt([] {
                  gpu_sandbox::make_node_root(kNode);
                  gpu_sandbox::install_driver_in_root(kNode, "550.54.15");
                  NodeDriver d;
                  // The cache names /lib/MULTIARCH; lib -> usr/lib is now a user's.
                  CHILD_EXPECT(::lchown((kNode + "/lib").c_str(), 1000, 1000) == 0);
                  const std::string e = discover(search({kNode}), d);
                  CHILD_EXPECT(contains(e, kNode + "/lib is a symlink owned by uid 1000"));
                  CHILD_EXPECT(::lchown((kNode + "/lib").c_str(), 0, 0) == 0);
                  // A soname link that a user owns, inside the root-owned directory.
                  const std::string link = kNodeLib + "/libnvidia-ml.so.1";
                  CHILD_EXPECT(::lchown(link.c_str(), 1000, 1000) == 0);
                  CHILD_EXPECT(contains(discover(search({kNode}), d),
                                        link + " is a symlink owned by uid 1000"));
                  return std::string();
              }),
              "");
}

TEST(GpuDiscover, AHalfDoneUpgradeIsAnError) {
    EXPECT_EQ(on_mnt([] {
                  gpu_sandbox::make_node_root(kNode);
                  gpu_sandbox::install_driver_in_root(kNode, "550.54.15");
                  // The upgrade replaced NVML only.
                  fs::remove(kNodeLib + "/libnvidia-ml.so.1");
                  fs::remove(kNodeLib + "/libnvidia-ml.so.550.54.15");
                  fs::copy_file(fixture::fake_driver_dir("580.159.04") +
                                    "/lib/libnvidia-ml.so.580.159.04",
                                kNodeLib + "/libnvidia-ml.so.580.159.04");
                  fs::create_symlink("libnvidia-ml.so.580.159.04", kNodeLib + "/libnvidia-ml.so.1");
                  gpu_sandbox::refresh_cache(kNode);
                  NodeDriver d;
                  const std::string e = discover(search({kNode}, GpuMode::Auto), d);
                  CHILD_EXPECT(contains(e, "libcuda.so.1 is driver 550.54.15 but its "
                                           "libnvidia-ml.so.1 is driver 580.159.04"));
                  return std::string();
              }),
              "");
}

TEST(GpuDiscover, ALoaderCacheOfAnotherArchitectureIsAnErrorInEveryMode) {
    EXPECT_EQ(on_mnt([] {
                  gpu_sandbox::make_node_root(kNode);
                  gpu_sandbox::install_driver_in_root(kNode, "550.54.15");
                  // The same files, as the other architecture's ldconfig lists them.
                  const sjail::Arch &other = sjail::kBuildArch.name == sjail::kArchX8664.name
                                                 ? sjail::kArchAarch64
                                                 : sjail::kArchX8664;
                  const std::string cache = kNode + "/etc/ld.so.cache";
                  fixture::write_text(cache, fixture::with_entry_flags(fixture::read_bytes(cache),
                                                                       "/", other.ld_cache_flags));
                  for (const auto mode : {GpuMode::Auto, GpuMode::On}) {
                      NodeDriver d;
                      const std::string e = discover(search({kNode}, mode), d);
                      CHILD_EXPECT(contains(e, "the loader cache " + cache + " holds only " +
                                                   std::string(other.name) +
                                                   " entries; this node is " +
                                                   std::string(sjail::kBuildArch.name)));
                      CHILD_EXPECT(contains(e, "install the NVIDIA driver built for " +
                                                   std::string(sjail::kBuildArch.name)));
                      CHILD_EXPECT(!d.found());
                  }
                  return std::string();
              }),
              "");
}

TEST(GpuDiscover, AStaleCacheEntryIsANoteNotAFailure) {
    EXPECT_EQ(on_mnt([] {
                  gpu_sandbox::make_node_root(kNode);
                  gpu_sandbox::install_driver_in_root(kNode, "550.54.15");
                  fs::remove(kNodeLib + "/libnvidia-ptxjitcompiler.so.1");
                  fs::remove(kNodeLib + "/libnvidia-ptxjitcompiler.so.550.54.15");
                  NodeDriver d;
                  if (auto e = discover(search({kNode}), d); !e.empty()) {
                      return e;
                  }
                  CHILD_EXPECT(d.version == "550.54.15");
                  CHILD_EXPECT(file_named(d, "libnvidia-ptxjitcompiler.so.550.54.15") == nullptr);
                  CHILD_EXPECT(std::any_of(d.notes.begin(), d.notes.end(), [](const auto &n) {
                      return contains(n, "libnvidia-ptxjitcompiler.so.1") &&
                             contains(n, "stale loader cache entry");
                  }));
                  return std::string();
              }),
              "");
}

TEST(GpuDiscover, AnUpgradeChangesTheStampAndNothingElseDoes) {
    EXPECT_EQ(on_mnt([] {
                  gpu_sandbox::make_node_root(kNode);
                  gpu_sandbox::install_driver_in_root(kNode, "550.54.15");
                  NodeDriver first;
                  NodeDriver again;
                  NodeDriver upgraded;
                  CHILD_EXPECT(discover(search({kNode}), first).empty());
                  CHILD_EXPECT(discover(search({kNode}), again).empty());
                  const std::string stamp = sjail::driver_stamp(first.version, first.files);
                  CHILD_EXPECT(sjail::driver_stamp(again.version, again.files) == stamp);
                  gpu_sandbox::remove_driver_from_root(kNode);
                  gpu_sandbox::install_driver_in_root(kNode, "580.159.04");
                  CHILD_EXPECT(discover(search({kNode}), upgraded).empty());
                  CHILD_EXPECT(upgraded.version == "580.159.04");
                  const std::string after = sjail::driver_stamp(upgraded.version, upgraded.files);
                  CHILD_EXPECT(after != stamp);
                  CHILD_EXPECT(contains(after, "library " + kNodeLib + "/libcuda.so.580.159.04"));
                  // A reinstall of the same version (new inodes) changes it too.
                  gpu_sandbox::remove_driver_from_root(kNode);
                  gpu_sandbox::install_driver_in_root(kNode, "580.159.04");
                  NodeDriver reinstalled;
                  CHILD_EXPECT(discover(search({kNode}), reinstalled).empty());
                  CHILD_EXPECT(sjail::driver_stamp(reinstalled.version, reinstalled.files) !=
                               after);
                  return std::string();
              }),
              "");
}

TEST(GpuDiscover, TheMemoStandsInForTheLoaderCacheUntilTheCacheIsANewFile) {
    EXPECT_EQ(on_mnt([] {
                  gpu_sandbox::make_node_root(kNode);
                  gpu_sandbox::install_driver_in_root(kNode, "550.54.15");
                  NodeDriver read;
                  CHILD_EXPECT(discover(search({kNode}), read).empty());
                  CHILD_EXPECT(contains(read.memo, "libcuda.so.1"));
                  DriverSearch with_memo = search({kNode});
                  with_memo.memo = read.memo;
                  NodeDriver recalled;
                  CHILD_EXPECT(discover(with_memo, recalled).empty());
                  CHILD_EXPECT(recalled.version == "550.54.15" && recalled.memo == read.memo);
                  CHILD_EXPECT(sjail::driver_stamp(recalled.version, recalled.files) ==
                               sjail::driver_stamp(read.version, read.files));
                  // The memo is believed while the cache is the same file: a
                  // memo for this cache that lists nothing finds no driver.
                  const std::size_t key_at = read.memo.find('\n') + 1;
                  const std::string key =
                      read.memo.substr(key_at, read.memo.find('\n', key_at) - key_at);
                  CHILD_EXPECT(key.starts_with("ld.so.cache " + kNode + "/etc/ld.so.cache dev="));
                  DriverSearch empty_memo = search({kNode}, GpuMode::Auto);
                  empty_memo.memo = sjail::driver_memo_text(key, {});
                  NodeDriver none;
                  CHILD_EXPECT(discover(empty_memo, none).empty());
                  CHILD_EXPECT(!none.found());
                  // An upgrade runs ldconfig: a new cache file, so the old memo
                  // is passed over and the new driver found.
                  gpu_sandbox::remove_driver_from_root(kNode);
                  gpu_sandbox::install_driver_in_root(kNode, "580.159.04");
                  NodeDriver upgraded;
                  CHILD_EXPECT(discover(with_memo, upgraded).empty());
                  CHILD_EXPECT(upgraded.version == "580.159.04");
                  CHILD_EXPECT(!upgraded.memo.empty() && upgraded.memo != read.memo);
                  return std::string();
              }),
              "");
}

TEST(GpuDiscover, DaemonSocketDirectoriesAndDataFilesAreFound) {
    EXPECT_EQ(on_mnt([] {
                  gpu_sandbox::make_toolkit_root(kToolkit, "550.54.15");
                  fixture::make_dirs(kToolkit + "/run/nvidia-persistenced");
                  fixture::make_dirs(kToolkit + "/share/nvidia");
                  fixture::write_text(kToolkit + "/share/nvidia/nvoptix.bin", "optix data");
                  fixture::make_dirs("/mnt/tmp-mps");
                  NodeDriver d;
                  auto s = search({kToolkit});
                  s.mps_pipe_dir = "/mnt/tmp-mps";
                  if (auto e = discover(s, d); !e.empty()) {
                      return e;
                  }
                  const auto *ipc = file_named(d, "/run/nvidia-persistenced");
                  CHILD_EXPECT(ipc != nullptr && ipc->kind == DriverFileKind::IpcDir);
                  CHILD_EXPECT(ipc->node_path == kToolkit + "/run/nvidia-persistenced");
                  const auto *optix = file_named(d, "/usr/share/nvidia/nvoptix.bin");
                  CHILD_EXPECT(optix != nullptr && optix->kind == DriverFileKind::DataFile);
                  CHILD_EXPECT(optix->node_path == kToolkit + "/share/nvidia/nvoptix.bin");
                  const auto *mps = file_named(d, "/mnt/tmp-mps");
                  CHILD_EXPECT(mps != nullptr && mps->kind == DriverFileKind::IpcDir);
                  // An MPS pipe directory below /tmp is never shared, with a note why.
                  s.mps_pipe_dir = "/tmp";
                  NodeDriver below_tmp;
                  CHILD_EXPECT(discover(s, below_tmp).empty());
                  CHILD_EXPECT(file_named(below_tmp, "/tmp") == nullptr);
                  CHILD_EXPECT(std::any_of(
                      below_tmp.notes.begin(), below_tmp.notes.end(),
                      [](const auto &n) { return contains(n, "CUDA_MPS_PIPE_DIRECTORY"); }));
                  return std::string();
              }),
              "");
}
