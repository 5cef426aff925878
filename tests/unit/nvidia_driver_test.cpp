// SPDX-License-Identifier: Apache-2.0
// Which files are the NVIDIA driver's, how they appear in the view, and the stamp.
#include "ldconfig_fixture.hpp"
#include "sjail/core/gpu/ld_cache.hpp"
#include "sjail/core/gpu/nvidia_driver.hpp"

#include <algorithm>
#include <gtest/gtest.h>

using sjail::DriverBind;
using sjail::DriverFile;
using sjail::DriverFileKind;
using sjail::DriverLink;
using sjail::DriverPlan;
using sjail::DriverSelection;
using sjail::DriverUse;
using sjail::LibraryName;
using Strings = std::vector<std::string>;

namespace {

const std::string kLib = "/usr/lib/x86_64-linux-gnu";

// Names of an NVIDIA installer's layout for `version`, resolved as the system layer does.
std::vector<LibraryName> installed(const std::string &version, const std::string &dir = kLib) {
    return {
        {dir, "libcuda.so", "libcuda.so." + version},
        {dir, "libcuda.so.1", "libcuda.so." + version},
        {dir, "libnvidia-ml.so.1", "libnvidia-ml.so." + version},
        {dir, "libnvidia-ptxjitcompiler.so.1", "libnvidia-ptxjitcompiler.so." + version},
        {dir, "libnvidia-glcore.so." + version, "libnvidia-glcore.so." + version},
        {dir, "libGLX_nvidia.so.0", "libGLX_nvidia.so." + version},
        {dir, "libnvcuvid.so.1", "libnvcuvid.so." + version},
        {dir, "libnvidia-nvvm70.so.4", "libnvidia-nvvm70.so.4"},
    };
}

DriverSelection select(const std::vector<LibraryName> &names) {
    DriverSelection out;
    const auto s = sjail::select_driver_libraries(names, out);
    EXPECT_TRUE(s.ok()) << s.message();
    return out;
}

std::string select_error(const std::vector<LibraryName> &names) {
    DriverSelection out;
    const auto s = sjail::select_driver_libraries(names, out);
    return s.ok() ? "" : s.message();
}

Strings reals(const DriverSelection &sel) {
    Strings out;
    for (const auto &l : sel.libraries) {
        out.push_back(l.real);
    }
    return out;
}

DriverFile library(const std::string &real, Strings links) {
    DriverFile f;
    f.kind = DriverFileKind::Library;
    f.node_path = kLib + "/" + real;
    f.name = real;
    f.links = std::move(links);
    f.identity = {1, 100, 5000, 10, 1, 20, 2};
    return f;
}

DriverFile other(DriverFileKind kind, const std::string &node, const std::string &view) {
    DriverFile f;
    f.kind = kind;
    f.node_path = node;
    f.name = kind == DriverFileKind::Binary ? node.substr(node.rfind('/') + 1) : "";
    f.view_path = view;
    f.identity = {1, 200, 10, 10, 1, 20, 2};
    return f;
}

} // namespace

TEST(GpuDriverNames, StemsAndFamilies) {
    EXPECT_EQ(sjail::library_stem("libcuda.so.580.159.04"), "libcuda");
    EXPECT_EQ(sjail::library_stem("libGLX_nvidia.so.0"), "libGLX_nvidia");
    EXPECT_EQ(sjail::library_stem("libcuda.so"), "libcuda");
    EXPECT_EQ(sjail::library_stem("libcuda.sox"), "");
    EXPECT_EQ(sjail::library_stem("nvidia-smi"), "");
    for (const std::string name :
         {"libcuda.so.1", "libcudadebugger.so.1", "libnvidia-ml.so.1", "libnvcuvid.so.1",
          "libnvoptix.so.1", "libnvidia-ptxjitcompiler.so.1", "libnvidia-tileiras.so.580.65.06",
          "libEGL_nvidia.so.0", "libGLESv1_CM_nvidia.so.1", "libvdpau_nvidia.so.1",
          "libnvidia-egl-wayland.so.1"}) {
        EXPECT_TRUE(sjail::is_driver_library_name(name)) << name;
    }
    for (const std::string name :
         {"libc.so.6", "libcudart.so.12", "libcublas.so.12", "libnccl.so.2", "libnvToolsExt.so.1",
          "libnvidia-container.so.1", "libnvidia-container-go.so.1", "libGLX.so.0", "libEGL.so.1",
          "lib_nvidia.so", "libcuda", "nvidia-smi"}) {
        EXPECT_FALSE(sjail::is_driver_library_name(name)) << name;
    }
}

TEST(GpuDriverNames, UsesFollowDriverCapabilities) {
    EXPECT_EQ(sjail::driver_library_use("libcuda"), DriverUse::Compute);
    EXPECT_EQ(sjail::driver_library_use("libnvidia-ptxjitcompiler"), DriverUse::Compute);
    EXPECT_EQ(sjail::driver_library_use("libnvidia-ml"), DriverUse::Utility);
    EXPECT_EQ(sjail::driver_library_use("libnvcuvid"), DriverUse::Video);
    EXPECT_EQ(sjail::driver_library_use("libEGL_nvidia"), DriverUse::Graphics);
    EXPECT_EQ(sjail::driver_library_use("libnvidia-egl-gbm"), DriverUse::Graphics);
    EXPECT_EQ(sjail::driver_library_use("libnvidia-something-new"), DriverUse::Other);
    EXPECT_EQ(sjail::driver_use_name(DriverUse::Utility), "utility");
}

TEST(GpuDriverNames, DriverVersions) {
    for (const std::string v : {"580.159.04", "550.54.15", "535.104.05", "470.82.01", "555.42"}) {
        EXPECT_TRUE(sjail::is_driver_version(v)) << v;
    }
    for (const std::string v : {"1", "1.1.13", "4", "", "580", "580.", ".159", "580.1x.04",
                                "580.159.04.1", "58.159.04"}) {
        EXPECT_FALSE(sjail::is_driver_version(v)) << v;
    }
    EXPECT_EQ(sjail::driver_version_suffix("libcuda.so.580.159.04"), "580.159.04");
    EXPECT_EQ(sjail::driver_version_suffix("libnvidia-ml.so.1"), "");
    EXPECT_EQ(sjail::driver_version_suffix("libnvidia-egl-wayland.so.1.1.13"), "");
    EXPECT_EQ(sjail::driver_version_suffix("libcuda.so"), "");
}

TEST(GpuDriverSelect, TheInstallersLayoutAtOneVersion) {
    const auto sel = select(installed("580.159.04"));
    EXPECT_EQ(sel.version, "580.159.04");
    EXPECT_EQ(reals(sel), (Strings{"libGLX_nvidia.so.580.159.04", "libcuda.so.580.159.04",
                                   "libnvcuvid.so.580.159.04", "libnvidia-glcore.so.580.159.04",
                                   "libnvidia-ml.so.580.159.04", "libnvidia-nvvm70.so.4",
                                   "libnvidia-ptxjitcompiler.so.580.159.04"}));
    const auto cuda = std::find_if(sel.libraries.begin(), sel.libraries.end(),
                                   [](const auto &l) { return l.real == "libcuda.so.580.159.04"; });
    ASSERT_NE(cuda, sel.libraries.end());
    EXPECT_EQ(cuda->links, (Strings{"libcuda.so", "libcuda.so.1"}));
    EXPECT_EQ(cuda->dir, kLib);
    EXPECT_EQ(cuda->use, DriverUse::Compute);
    const auto glcore = std::find_if(sel.libraries.begin(), sel.libraries.end(), [](const auto &l) {
        return l.real == "libnvidia-glcore.so.580.159.04";
    });
    ASSERT_NE(glcore, sel.libraries.end());
    EXPECT_TRUE(glcore->links.empty()); // its soname is its file name
    EXPECT_TRUE(sel.ignored.empty());
}

TEST(GpuDriverSelect, LeftoversOfAnotherVersionAndOtherProjectsAreIgnored) {
    auto names = installed("580.159.04");
    names.push_back({kLib, "libnvidia-opencl.so.1", "libnvidia-opencl.so.550.54.15"});
    names.push_back({kLib, "libnvidia-egl-wayland.so.1", "libnvidia-egl-wayland.so.1.1.13"});
    names.push_back({kLib, "libnvidia-glsi.so.550.54.15", "libnvidia-glsi.so.550.54.15"});
    const auto sel = select(names);
    EXPECT_EQ(sel.version, "580.159.04");
    EXPECT_EQ(sel.libraries.size(), 7U);
    ASSERT_EQ(sel.ignored.size(), 3U);
    EXPECT_NE(sel.ignored[0].find("libnvidia-opencl.so.550.54.15 is not of driver 580.159.04"),
              std::string::npos)
        << sel.ignored[0];
}

TEST(GpuDriverSelect, NoLibcudaOrNvmlMeansNoDriver) {
    const auto sel =
        select({{kLib, "libnvidia-egl-wayland.so.1", "libnvidia-egl-wayland.so.1.1.13"},
                {kLib, "libnvidia-glcore.so.580.159.04", "libnvidia-glcore.so.580.159.04"}});
    EXPECT_EQ(sel.version, "");
    EXPECT_TRUE(sel.libraries.empty());
    EXPECT_EQ(select({}).version, "");
}

TEST(GpuDriverSelect, NvmlAloneGivesTheVersion) {
    const auto sel = select({{kLib, "libnvidia-ml.so.1", "libnvidia-ml.so.550.54.15"}});
    EXPECT_EQ(sel.version, "550.54.15");
    EXPECT_EQ(reals(sel), Strings{"libnvidia-ml.so.550.54.15"});
}

TEST(GpuDriverSelect, AHalfDoneUpgradeIsAnError) {
    const std::string error =
        select_error({{kLib, "libcuda.so.1", "libcuda.so.580.159.04"},
                      {kLib, "libnvidia-ml.so.1", "libnvidia-ml.so.550.54.15"}});
    EXPECT_NE(error.find("libcuda.so.1 is driver 580.159.04"), std::string::npos) << error;
    EXPECT_NE(error.find("libnvidia-ml.so.1 is driver 550.54.15"), std::string::npos) << error;
    EXPECT_NE(error.find("reinstall the driver"), std::string::npos) << error;
}

TEST(GpuDriverSelect, AStubOrUnversionedLibcudaIsAnError) {
    const std::string error =
        select_error({{"/usr/local/cuda/lib64/stubs", "libcuda.so.1", "libcuda.so.1"}});
    EXPECT_NE(error.find("/usr/local/cuda/lib64/stubs/libcuda.so.1 is the file libcuda.so.1"),
              std::string::npos)
        << error;
    EXPECT_NE(error.find("CUDA stub"), std::string::npos) << error;
}

TEST(GpuDriverSelect, TheLoadersFirstCopyOfANameWins) {
    auto names = installed("580.159.04", "/opt/first");
    const auto second = installed("580.159.04", "/opt/second");
    names.insert(names.end(), second.begin(), second.end());
    const auto sel = select(names);
    EXPECT_EQ(sel.libraries.size(), 7U);
    for (const auto &lib : sel.libraries) {
        EXPECT_EQ(lib.dir, "/opt/first") << lib.real;
    }
    EXPECT_EQ(sel.ignored.size(), second.size());
}

TEST(GpuDriverSelect, CandidatesComeFromARealCacheInLoaderOrder) {
    const fixture::TempDir dir;
    fixture::install_host_libc(dir.path() + fixture::kMultiarchLib);
    fixture::install_fake_libs("550.54.15", dir.path() + fixture::kMultiarchLib);
    fixture::install_fake_libs("580.159.04", dir.path() + "/opt/newer");
    fixture::make_dirs(dir.path() + "/etc");
    fixture::write_text(dir.path() + "/etc/ld.so.conf",
                        "/opt/newer\n" + fixture::kMultiarchLib + "\n");
    sjail::LdCache cache;
    ASSERT_TRUE(
        sjail::parse_ld_cache(fixture::read_bytes(fixture::make_cache(dir.path())), cache).ok());
    const auto candidates = sjail::driver_library_candidates(cache, sjail::kBuildArch);
    Strings got;
    for (const auto &c : candidates) {
        got.push_back(c.dir + "/" + c.name);
        EXPECT_EQ(c.real, "");
    }
    // One per name (sonames and the development links ldconfig lists too), in
    // the directory the loader would use, in the cache's order; no libc.
    EXPECT_EQ(got, (Strings{"/opt/newer/libnvidia-ptxjitcompiler.so.1",
                            "/opt/newer/libnvidia-ptxjitcompiler.so",
                            "/opt/newer/libnvidia-ml.so.1", "/opt/newer/libnvidia-ml.so",
                            "/opt/newer/libcuda.so.1", "/opt/newer/libcuda.so"}));
}

TEST(GpuDriverPlan, LibrariesAndBinariesGoIntoTheTree) {
    const std::vector<DriverFile> files = {
        library("libcuda.so.550.54.15", {"libcuda.so", "libcuda.so.1"}),
        library("libnvidia-ml.so.550.54.15", {"libnvidia-ml.so.1"}),
        other(DriverFileKind::Binary, "/usr/bin/nvidia-smi", ""),
    };
    DriverPlan plan;
    const auto s = sjail::plan_driver_view(files, {}, plan);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(plan.tree, "/usr/local/nvidia");
    EXPECT_EQ(plan.directories, (Strings{"/usr/local/nvidia/lib64", "/usr/local/nvidia/bin"}));
    EXPECT_EQ(plan.library_dirs, Strings{"/usr/local/nvidia/lib64"});
    EXPECT_EQ(plan.binds,
              (std::vector<DriverBind>{
                  {0, "/usr/local/nvidia/lib64/libcuda.so.550.54.15", true, true, ""},
                  {1, "/usr/local/nvidia/lib64/libnvidia-ml.so.550.54.15", true, true, ""},
                  {2, "/usr/local/nvidia/bin/nvidia-smi", true, true, ""}}));
    EXPECT_EQ(plan.links,
              (std::vector<DriverLink>{
                  {"/usr/local/nvidia/lib64/libcuda.so", "libcuda.so.550.54.15"},
                  {"/usr/local/nvidia/lib64/libcuda.so.1", "libcuda.so.550.54.15"},
                  {"/usr/local/nvidia/lib64/libnvidia-ml.so.1", "libnvidia-ml.so.550.54.15"}}));
}

TEST(GpuDriverPlan, IpcAndDataAreBoundAtTheirPathsWithANoteForMissingMountPoints) {
    const std::vector<DriverFile> files = {
        other(DriverFileKind::DataFile, "/usr/share/nvidia/nvoptix.bin",
              "/usr/share/nvidia/nvoptix.bin"),
        other(DriverFileKind::IpcDir, "/run/nvidia/driver/run/nvidia-persistenced",
              "/run/nvidia-persistenced"),
        library("libcuda.so.550.54.15", {"libcuda.so.1"}),
    };
    DriverPlan plan;
    ASSERT_TRUE(sjail::plan_driver_view(files, {"/opt/nvidia"}, plan).ok());
    ASSERT_EQ(plan.binds.size(), 3U);
    EXPECT_EQ(plan.binds[0].target, "/opt/nvidia/lib64/libcuda.so.550.54.15");
    EXPECT_EQ(plan.binds[1].target, "/run/nvidia-persistenced");
    EXPECT_FALSE(plan.binds[1].in_tree);
    EXPECT_FALSE(plan.binds[1].read_only); // clients connect to the socket
    EXPECT_NE(plan.binds[1].missing_note.find("create it in the jail image as a root-owned "
                                              "directory"),
              std::string::npos)
        << plan.binds[1].missing_note;
    EXPECT_EQ(plan.binds[2].target, "/usr/share/nvidia/nvoptix.bin");
    EXPECT_TRUE(plan.binds[2].read_only);
}

TEST(GpuDriverPlan, BadLayoutsAreErrors) {
    DriverPlan plan;
    EXPECT_FALSE(
        sjail::plan_driver_view({library("libcuda.so.1", {"libcuda.so.1"})}, {}, plan).ok());
    EXPECT_FALSE(sjail::plan_driver_view({library("libcuda.so.5", {"../escape"})}, {}, plan).ok());
    EXPECT_FALSE(sjail::plan_driver_view({library("lib/cuda.so.5", {})}, {}, plan).ok());
    EXPECT_FALSE(sjail::plan_driver_view({library("libcuda.so.5", {})}, {"/"}, plan).ok());
    EXPECT_FALSE(sjail::plan_driver_view({library("libcuda.so.5", {})}, {"relative"}, plan).ok());
    EXPECT_FALSE(sjail::plan_driver_view(
                     {other(DriverFileKind::DataFile, "/x", "/usr/local/nvidia/x")}, {}, plan)
                     .ok());
}

TEST(GpuDriverPlan, MpsBelowTmpCannotBeShared) {
    EXPECT_NE(sjail::mps_pipe_dir_note("/tmp/nvidia-mps").find("CUDA_MPS_PIPE_DIRECTORY"),
              std::string::npos);
    EXPECT_EQ(sjail::mps_pipe_dir_note("/run/nvidia-mps"), "");
}

TEST(GpuDriverStamp, ChangesWithEveryIdentityFieldNotWithOrder) {
    const std::vector<DriverFile> files = {
        library("libcuda.so.550.54.15", {"libcuda.so.1"}),
        other(DriverFileKind::Binary, "/usr/bin/nvidia-smi", "")};
    const std::string stamp = sjail::driver_stamp("550.54.15", files);
    EXPECT_EQ(stamp.rfind("nvidia-driver 550.54.15\n", 0), 0U) << stamp;
    EXPECT_NE(stamp.find("library /usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15 dev=1 ino=100 "
                         "size=5000 mtime=10.1 ctime=20.2\n"),
              std::string::npos)
        << stamp;
    EXPECT_EQ(sjail::driver_stamp("550.54.15", {files[1], files[0]}), stamp);
    EXPECT_NE(sjail::driver_stamp("580.159.04", files), stamp);
    for (int field = 0; field < 7; ++field) {
        auto changed = files;
        auto &id = changed[0].identity;
        switch (field) {
        case 0:
            ++id.dev;
            break;
        case 1:
            ++id.ino;
            break;
        case 2:
            ++id.size;
            break;
        case 3:
            ++id.mtime_sec;
            break;
        case 4:
            ++id.mtime_nsec;
            break;
        case 5:
            ++id.ctime_sec;
            break;
        default:
            ++id.ctime_nsec;
            break;
        }
        EXPECT_NE(sjail::driver_stamp("550.54.15", changed), stamp) << "field " << field;
    }
}

TEST(GpuDriverPrograms, ATreeOfItsOwnKeepsThemBesideItsLibrariesThenTheUsualPlace) {
    auto dirs = [](const std::string &lib_dir, const std::string &bin_dir) {
        return sjail::driver_program_dirs(select(installed("580.159.04", lib_dir)), bin_dir);
    };
    // The container toolkit's tree found through the node's loader cache.
    EXPECT_EQ(dirs("/usr/local/nvidia/lib64", "/usr/bin"),
              (Strings{"/usr/local/nvidia/bin", "/usr/bin"}));
    EXPECT_EQ(dirs("/opt/nvidia/lib", "/usr/bin"), (Strings{"/opt/nvidia/bin", "/usr/bin"}));
    // Distribution packages (multiarch) and the RHEL family (/usr/lib64).
    EXPECT_EQ(dirs(kLib, "/usr/bin"), (Strings{"/usr/bin"}));
    EXPECT_EQ(dirs("/usr/lib64", "/usr/bin"), (Strings{"/usr/bin"}));
    // A driver root without a loader cache: its lib64/ and its bin/.
    EXPECT_EQ(dirs("/lib64", "/bin"), (Strings{"/bin"}));
    // NVML alone gives the place too.
    DriverSelection nvml;
    nvml.libraries = {
        {"/usr/local/nvidia/lib64", "libnvidia-ml.so.550.54.15", {}, DriverUse::Utility}};
    EXPECT_EQ(sjail::driver_program_dirs(nvml, "/usr/bin"),
              (Strings{"/usr/local/nvidia/bin", "/usr/bin"}));
}

TEST(GpuDriverSpecs, BinariesLeaveNodeDaemonsOut) {
    Strings names;
    for (const auto &b : sjail::driver_binaries()) {
        names.emplace_back(b.path);
        EXPECT_FALSE(b.reason.empty());
    }
    EXPECT_EQ(names, (Strings{"nvidia-smi", "nvidia-debugdump", "nvidia-cuda-mps-control",
                              "nvidia-cuda-mps-server"}));
    for (const auto &d : sjail::driver_ipc_dirs()) {
        EXPECT_EQ(std::string(d.path).rfind("/run/nvidia-", 0), 0U) << d.path;
    }
    for (const auto &f : sjail::driver_data_files()) {
        EXPECT_NE(f.use, DriverUse::Utility) << f.path; // NVML needs none of them
    }
}
