// SPDX-License-Identifier: Apache-2.0
// Root-level: the NVIDIA driver as GPU nodes have it in the field, each
// layout with the fake driver, through the plugin's own node namespace: a
// step's task dlopens libcuda.so.1 and libnvidia-ml.so.1, runs a normally
// linked CUDA program and nvidia-smi inside the jail, and neither the jail
// nor the node's driver files change.
//   distribution packages (libraries in the multiarch directory through the
//     node's ld.so.cache, nvidia-smi in /usr/bin, data files in /usr/share
//     and /etc); the GPU operator's driver root (/run/nvidia/driver, with its
//     own ld.so.cache); the container toolkit's tree (/usr/local/nvidia) on a
//     read-only mount with the jail's data files as symlinks into it;
//     Ubuntu's /sbin/ldconfig wrapper; a jail holding an older libcuda; the
//     RHEL family's /usr/lib64.
#include "gpu_sandbox.hpp"
#include "gpu_step.hpp"
#include "ldconfig_fixture.hpp"
#include "sandbox.hpp"

#include <filesystem>
#include <functional>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>

namespace fs = std::filesystem;
using gpu_step::expect_driver;
using gpu_step::run_as_step;
using kit::in_child;
using sjail::Config;

namespace {

const std::string kJail = "/mnt/jail";
const std::string kEgl = "/usr/share/glvnd/egl_vendor.d/10_nvidia.json";
const std::string kOpenCl = "/etc/OpenCL/vendors/nvidia.icd";

bool contains(const std::string &text, const std::string &part) {
    return text.find(part) != std::string::npos;
}

// `text` at `path`, its directories made first.
void write_at(const std::string &path, const std::string &text) {
    fixture::make_dirs(fs::path(path).parent_path().string());
    fixture::write_text(path, text);
}

// A sandbox node whose jail is ready for GPU steps, gpu=on with the driver
// searched under `driver_root` only, after `lay_out` put the driver there.
// Then `check` runs; the jail and the driver root must be as they were.
std::string on_node(const std::string &driver_root, const std::function<void()> &lay_out,
                    const std::function<std::string(const Config &)> &check) {
    return in_child([&] {
        Config config;
        if (auto e = sandbox::make_node(config); !e.empty()) {
            return e;
        }
        gpu_sandbox::ready_jail(kJail);
        gpu_step::add_nvidia_smi_link(kJail);
        gpu_step::add_cat(kJail);
        lay_out();
        config.gpu = sjail::GpuMode::On;
        config.gpu_driver_root = driver_root;
        config.gpu_mps_dir = "/mnt/node/nvidia-mps";
        const auto jail_before = gpu_sandbox::snapshot(kJail);
        const auto node_before = gpu_sandbox::snapshot(driver_root);
        if (auto e = check(config); !e.empty()) {
            return e;
        }
        if (auto e = gpu_step::jail_changes(kJail, jail_before); !e.empty()) {
            return e;
        }
        if (gpu_sandbox::snapshot(driver_root) != node_before) {
            return "the node's driver files changed under " + driver_root;
        }
        return std::string();
    });
}

// A node root as a distribution's packages leave it: the driver's libraries
// in the multiarch directory, listed in the root's own ld.so.cache,
// nvidia-smi in /usr/bin, its EGL and OpenCL files in /usr/share and /etc.
void distribution_root(const std::string &root, const std::string &version) {
    gpu_sandbox::make_node_root(root);
    gpu_sandbox::install_driver_in_root(root, version);
    write_at(root + kEgl, "node's egl " + version);
    write_at(root + kOpenCl, "node's icd " + version);
}

// The jail image's mount points for the data files: root-owned files.
void data_file_mount_points() {
    write_at(kJail + kEgl, "");
    write_at(kJail + kOpenCl, "");
}

// A step sees the node's data files at their own paths.
std::string expect_data_files(const Config &config, const std::string &version) {
    std::string out;
    CHILD_EXPECT(run_as_step(config, {"cat", kEgl, kOpenCl}, out) == 0);
    CHILD_EXPECT(out == "node's egl " + version + "node's icd " + version);
    return "";
}

} // namespace

TEST(GpuLayouts, DistributionPackagesThroughTheNodesLoaderCache) {
    const std::string root = "/mnt/node/root";
    EXPECT_EQ(on_node(
                  root,
                  [&] {
                      distribution_root(root, "550.54.15");
                      data_file_mount_points();
                  },
                  [](const Config &config) {
                      if (auto e = expect_driver(config, "550.54.15", "12040"); !e.empty()) {
                          return e;
                      }
                      return expect_data_files(config, "550.54.15");
                  }),
              "");
}

TEST(GpuLayouts, TheGpuOperatorsDriverRootWithItsOwnLoaderCache) {
    const std::string root = "/mnt/node/run/nvidia/driver";
    EXPECT_EQ(on_node(
                  root,
                  [&] {
                      distribution_root(root, "580.159.04");
                      data_file_mount_points();
                  },
                  [](const Config &config) {
                      if (auto e = expect_driver(config, "580.159.04", "13000"); !e.empty()) {
                          return e;
                      }
                      return expect_data_files(config, "580.159.04");
                  }),
              "");
}

// As on NVIDIA's own GPU machines: the toolkit's tree is a read-only mount,
// and the node image (so a jail made from it) has the graphics data files as
// symlinks into it. Those are skipped with a note, never followed.
TEST(GpuLayouts, TheToolkitsTreeOnAReadOnlyMountWithTheJailsDataFilesAsSymlinks) {
    const std::string tree = "/mnt/node/nvidia";
    EXPECT_EQ(on_node(
                  tree,
                  [&] {
                      gpu_sandbox::make_toolkit_root(tree, "580.159.04");
                      write_at(tree + "/share/glvnd/egl_vendor.d/10_nvidia.json", "egl");
                      if (::mount(tree.c_str(), tree.c_str(), nullptr, MS_BIND, nullptr) != 0 ||
                          ::mount(nullptr, tree.c_str(), nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY,
                                  nullptr) != 0) {
                          throw std::runtime_error("read-only bind of " + tree);
                      }
                      fixture::make_dirs(kJail + "/usr/share/glvnd/egl_vendor.d");
                      fs::create_symlink(
                          "/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json",
                          kJail + kEgl);
                  },
                  [&](const Config &config) {
                      if (auto e = expect_driver(config, "580.159.04", "13000"); !e.empty()) {
                          return e;
                      }
                      const std::string report = kit::read_file(config.state_dir + "/gpu");
                      CHILD_EXPECT(contains(report, "note: skipped the node's " + tree +
                                                        "/share/glvnd/egl_vendor.d/10_nvidia.json "
                                                        "(optional): "));
                      CHILD_EXPECT(!contains(report, kEgl + " <- "));
                      return std::string();
                  }),
              "");
}

// As on NVIDIA's own GPU machines, with the driver searched on the node's
// root: its loader cache lists the toolkit's tree at /usr/local/nvidia, and
// /usr/bin/nvidia-smi is the site's wrapper script (inside the jail it finds
// only itself). The tree's own nvidia-smi is bound; the wrapper is passed over.
TEST(GpuLayouts, TheToolkitsTreeThroughTheNodesLoaderCacheBesideAWrapperInUsrBin) {
    const std::string root = "/mnt/node/root";
    const std::string wrapper = root + "/usr/bin/nvidia-smi";
    EXPECT_EQ(on_node(
                  root,
                  [&] {
                      gpu_sandbox::make_node_root(root);
                      gpu_sandbox::make_toolkit_root(root + "/usr/local/nvidia", "580.159.04");
                      write_at(root + "/etc/ld.so.conf.d/000_nvidia.conf",
                               "/usr/local/nvidia/lib64\n");
                      gpu_sandbox::refresh_cache(root);
                      write_at(wrapper, "#!/bin/sh\necho a site wrapper\n");
                      ::chmod(wrapper.c_str(), 0755);
                  },
                  [&](const Config &config) {
                      if (auto e = expect_driver(config, "580.159.04", "13000"); !e.empty()) {
                          return e;
                      }
                      const std::string report = kit::read_file(config.state_dir + "/gpu");
                      CHILD_EXPECT(contains(report, "/usr/local/nvidia/bin/nvidia-smi <- " + root +
                                                        "/usr/local/nvidia/bin/nvidia-smi\n"));
                      CHILD_EXPECT(!contains(report, "<- " + wrapper));
                      return std::string();
                  }),
              "");
}

// A node whose only nvidia-smi is a wrapper script: nothing of it is bound,
// and STATE/gpu says why; CUDA and NVML work as ever.
TEST(GpuLayouts, AWrapperScriptIsNeverBoundAsTheDriversProgram) {
    const std::string root = "/mnt/node/root";
    const std::string wrapper = root + "/usr/bin/nvidia-smi";
    EXPECT_EQ(on_node(
                  root,
                  [&] {
                      distribution_root(root, "550.54.15");
                      fs::remove(wrapper);
                      write_at(wrapper, "#!/bin/sh\necho a site wrapper\n");
                      ::chmod(wrapper.c_str(), 0755);
                  },
                  [&](const Config &config) {
                      std::string out;
                      CHILD_EXPECT(run_as_step(config, {"fake_nvidia_dlopen_probe"}, out) == 0);
                      CHILD_EXPECT(contains(out, "driver=550.54.15"));
                      const std::string report = kit::read_file(config.state_dir + "/gpu");
                      CHILD_EXPECT(contains(report, "note: passed over " + wrapper +
                                                        ": not an ELF program"));
                      CHILD_EXPECT(!contains(report, "<- " + wrapper));
                      return std::string();
                  }),
              "");
}

// Ubuntu's /sbin/ldconfig is a shell script running /sbin/ldconfig.real:
// the view's loader cache is built by the ELF program, the script never runs.
TEST(GpuLayouts, UbuntusLdconfigWrapper) {
    const std::string tree = "/mnt/node/nvidia";
    const std::string sbin = fs::canonical("/sbin").string();
    EXPECT_EQ(on_node(
                  tree,
                  [&] {
                      gpu_sandbox::make_toolkit_root(tree, "550.54.15");
                      fixture::make_dirs("/mnt/node/sbin");
                      fs::copy_file(sbin + "/ldconfig", "/mnt/node/sbin/ldconfig.real");
                      write_at("/mnt/node/sbin/ldconfig", "#!/bin/sh\ntouch /mnt/node/wrapper-ran\n"
                                                          "exec " +
                                                              sbin + "/ldconfig.real \"$@\"\n");
                      ::chmod("/mnt/node/sbin/ldconfig", 0755);
                      // This node's own sbin holds the two, as Ubuntu's does.
                      if (::mount("/mnt/node/sbin", sbin.c_str(), nullptr, MS_BIND, nullptr) != 0) {
                          throw std::runtime_error("bind over " + sbin);
                      }
                  },
                  [](const Config &config) {
                      if (auto e = expect_driver(config, "550.54.15", "12040"); !e.empty()) {
                          return e;
                      }
                      CHILD_EXPECT(!fs::exists("/mnt/node/wrapper-ran"));
                      return std::string();
                  }),
              "");
}

// A jail whose image carries an older libcuda (a CUDA image with a compat
// driver, or a package): the node's driver wins, by name and by link.
TEST(GpuLayouts, AJailsOlderLibcudaNeverWinsOverTheNodes) {
    const std::string root = "/mnt/node/root";
    EXPECT_EQ(
        on_node(
            root,
            [&] {
                distribution_root(root, "580.159.04");
                fixture::install_fake_libs("550.54.15", kJail + fixture::kMultiarchLib);
                auto argv = fixture::ldconfig_argv();
                argv.insert(argv.end(), {"-r", kJail});
                std::string out;
                if (fixture::run(argv, &out) != 0) {
                    throw std::runtime_error("ldconfig over the jail: " + out);
                }
            },
            [](const Config &config) { return expect_driver(config, "580.159.04", "13000"); }),
        "");
}

// The RHEL family: libraries in /usr/lib64, which the root's ld.so.conf lists.
TEST(GpuLayouts, TheRhelFamilysUsrLib64) {
    const std::string root = "/mnt/node/rhel";
    EXPECT_EQ(
        on_node(
            root,
            [&] {
                fixture::install_fake_libs("580.159.04", root + "/usr/lib64");
                fixture::make_dirs(root + "/usr/bin");
                fs::copy_file(fixture::fake_driver_dir("580.159.04") + "/bin/nvidia-smi",
                              root + "/usr/bin/nvidia-smi");
                write_at(root + "/etc/ld.so.conf", "include ld.so.conf.d/*.conf\n/usr/lib64\n");
                fixture::make_dirs(root + "/etc/ld.so.conf.d");
                gpu_sandbox::refresh_cache(root);
            },
            [&](const Config &config) {
                if (auto e = expect_driver(config, "580.159.04", "13000"); !e.empty()) {
                    return e;
                }
                const std::string report = kit::read_file(config.state_dir + "/gpu");
                CHILD_EXPECT(contains(report, gpu_step::kLib64 + "/libcuda.so.580.159.04 <- " +
                                                  root + "/usr/lib64/libcuda.so.580.159.04"));
                return std::string();
            }),
        "");
}
