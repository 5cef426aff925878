// SPDX-License-Identifier: Apache-2.0
// Root-level: a driver root without a loader cache (the container toolkit's
// layout) whose libraries are of the node's architecture, of another, or of
// both. The fake driver's libraries are built for this build's architecture;
// the foreign ones are copies with their ELF header's e_machine set to the
// other architecture's, so the same tests hold on x86-64 and arm64 builds.
#include "gpu_sandbox.hpp"
#include "ldconfig_fixture.hpp"
#include "sandbox.hpp"
#include "sjail/core/arch.hpp"
#include "sjail/sys/gpu/nvidia_driver.hpp"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <gtest/gtest.h>

namespace fs = std::filesystem;
using kit::in_child;
using sjail::DriverSearch;
using sjail::GpuMode;
using sjail::NodeDriver;

namespace {

const std::string kToolkit = "/mnt/toolkit";
const std::string kVersion = "580.159.04";
const std::string kNodeArch(sjail::kBuildArch.name);
const sjail::Arch &kForeign =
    sjail::kBuildArch.name == sjail::kArchX8664.name ? sjail::kArchAarch64 : sjail::kArchX8664;

std::string on_mnt(const std::function<std::string()> &check) {
    return in_child([&] {
        if (auto e = kit::private_node_namespace("gpu-sandbox", kit::HostMounts::Slave);
            !e.empty()) {
            return e;
        }
        return check();
    });
}

DriverSearch search(GpuMode mode) {
    DriverSearch s;
    s.mode = mode;
    s.roots = {kToolkit};
    s.mps_pipe_dir = "/mnt/no-mps";
    return s;
}

// Sets e_machine of every regular file in `dir` to `arch`'s: what the other
// architecture's driver package installs there, as far as the loader (and
// the check) can tell from the header.
void make_foreign(const std::string &dir, const sjail::Arch &arch) {
    for (const auto &e : fs::directory_iterator(dir)) {
        if (!e.is_regular_file() || e.is_symlink()) {
            continue;
        }
        std::string bytes = fixture::read_bytes(e.path().string());
        bytes[18] = static_cast<char>(arch.elf_machine & 0xffU);
        bytes[19] = static_cast<char>(arch.elf_machine >> 8U);
        fixture::write_text(e.path().string(), bytes);
    }
}

bool contains(const std::string &text, const std::string &part) {
    return text.find(part) != std::string::npos;
}

bool any_note(const NodeDriver &d, const std::string &part) {
    return std::any_of(d.notes.begin(), d.notes.end(),
                       [&](const std::string &n) { return contains(n, part); });
}

} // namespace

TEST(GpuDriverArch, AToolkitRootOfTheNodesArchitectureIsTaken) {
    EXPECT_EQ(on_mnt([] {
                  gpu_sandbox::make_toolkit_root(kToolkit, kVersion);
                  NodeDriver d;
                  const auto s = sjail::discover_node_driver(search(GpuMode::On), d);
                  if (!s.ok()) {
                      return s.message();
                  }
                  CHILD_EXPECT(d.version == kVersion && d.root == kToolkit);
                  CHILD_EXPECT(!any_note(d, "is built for"));
                  return std::string();
              }),
              "");
}

TEST(GpuDriverArch, AToolkitRootOfAnotherArchitectureIsAnErrorInEveryMode) {
    EXPECT_EQ(on_mnt([] {
                  gpu_sandbox::make_toolkit_root(kToolkit, kVersion);
                  make_foreign(kToolkit + "/lib64", kForeign);
                  for (const auto mode : {GpuMode::Auto, GpuMode::On}) {
                      NodeDriver d;
                      const std::string e = sjail::discover_node_driver(search(mode), d).message();
                      CHILD_EXPECT(contains(e, kToolkit + "/lib64/libcuda.so.1 is built for " +
                                                   std::string(kForeign.name) + "; this node is " +
                                                   kNodeArch +
                                                   ": gpu_driver_root= must hold the node's "
                                                   "own driver"));
                      CHILD_EXPECT(!d.found());
                  }
                  // gpu=off looks for nothing.
                  NodeDriver d;
                  CHILD_EXPECT(sjail::discover_node_driver(search(GpuMode::Off), d).ok());
                  return std::string();
              }),
              "");
}

TEST(GpuDriverArch, TheOtherArchitecturesCopiesBesideTheNodesAreLeftOut) {
    EXPECT_EQ(on_mnt([] {
                  // lib64/: the node's driver; lib/: the same driver for the
                  // other architecture (where the toolkit keeps 32-bit copies).
                  gpu_sandbox::make_toolkit_root(kToolkit, kVersion);
                  fixture::install_fake_libs(kVersion, kToolkit + "/lib");
                  make_foreign(kToolkit + "/lib", kForeign);
                  NodeDriver d;
                  const auto s = sjail::discover_node_driver(search(GpuMode::On), d);
                  if (!s.ok()) {
                      return s.message();
                  }
                  CHILD_EXPECT(d.version == kVersion);
                  for (const auto &f : d.files) {
                      CHILD_EXPECT(!contains(f.node_path, kToolkit + "/lib/"));
                  }
                  CHILD_EXPECT(
                      any_note(d, "ignored " + kToolkit + "/lib/libcuda.so.1: is built for " +
                                      std::string(kForeign.name) + ", this node is " + kNodeArch));
                  return std::string();
              }),
              "");
}

TEST(GpuDriverArch, TheNodesCopiesInLibAreTakenWhenLib64HoldsTheOtherArchitecturesOnly) {
    EXPECT_EQ(on_mnt([] {
                  // The node's driver in lib/, another architecture's in lib64/:
                  // the loader would take lib/'s; so does the check.
                  gpu_sandbox::make_toolkit_root(kToolkit, kVersion);
                  fixture::install_fake_libs(kVersion, kToolkit + "/lib");
                  make_foreign(kToolkit + "/lib64", kForeign);
                  NodeDriver d;
                  const auto s = sjail::discover_node_driver(search(GpuMode::On), d);
                  if (!s.ok()) {
                      return s.message();
                  }
                  const auto *cuda = [&]() -> const sjail::DriverFile * {
                      for (const auto &f : d.files) {
                          if (f.name == "libcuda.so." + kVersion) {
                              return &f;
                          }
                      }
                      return nullptr;
                  }();
                  CHILD_EXPECT(cuda != nullptr &&
                               cuda->node_path == kToolkit + "/lib/libcuda.so." + kVersion);
                  CHILD_EXPECT(any_note(d, "ignored " + kToolkit + "/lib64/libcuda.so.1"));
                  return std::string();
              }),
              "");
}
