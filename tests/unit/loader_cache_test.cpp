// SPDX-License-Identifier: Apache-2.0
// Root-level: the node's driver mounted into a small jail, a node-local
// loader cache built over it, and programs in the jail finding the driver by
// name, as jobs do. The jail's own files must not change.
#include "gpu_sandbox.hpp"
#include "ldconfig_fixture.hpp"
#include "sandbox.hpp"
#include "sjail/sys/gpu/ld_cache.hpp"
#include "sjail/sys/gpu/nvidia_driver.hpp"
#include "sjail/sys/gpu/nvidia_driver_mount.hpp"
#include "sjail/sys/safe_open.hpp"

#include <algorithm>
#include <fcntl.h>
#include <filesystem>
#include <functional>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

namespace fs = std::filesystem;
using kit::in_child;
using sjail::Config;
using sjail::Fd;

namespace {

const std::string kJail = "/mnt/jail";
const std::string kDriver = "/mnt/node/nvidia"; // the toolkit's layout
const std::string kCache = "/mnt/node/gpu/ld.so.cache";
const std::string kLib64 = "/usr/local/nvidia/lib64";
// The jail's libc as its loader cache names it: the first directory of
// Debian's MULTIARCH.conf that holds it (/lib/aarch64-linux-gnu on arm64).
const std::string kCachedLibc = std::string("/lib/") + SJAIL_MULTIARCH + "/libc.so.6";

bool contains(const std::string &text, const std::string &part) {
    return text.find(part) != std::string::npos;
}

// A child with a sandbox node (sandbox::make_node), its jail readied for
// loader tests and the fake driver `version` at kDriver.
std::string on_gpu_node(const std::string &version, const std::function<std::string()> &check) {
    return in_child([&] {
        Config config;
        if (auto e = sandbox::make_node(config); !e.empty()) {
            return e;
        }
        gpu_sandbox::ready_jail(kJail);
        gpu_sandbox::make_toolkit_root(kDriver, version);
        fixture::make_dirs("/mnt/node/gpu");
        return check();
    });
}

sjail::LoaderCacheRequest request() {
    sjail::LoaderCacheRequest r;
    r.view_root = kJail;
    r.first_dirs = {kLib64};
    r.expect_first = {"libcuda.so.1", "libnvidia-ml.so.1"};
    r.output = kCache;
    r.time_limit_ms = 20000;
    return r;
}

std::string discover(sjail::NodeDriver &driver) {
    sjail::DriverSearch search;
    search.mode = sjail::GpuMode::On;
    search.roots = {kDriver};
    search.mps_pipe_dir = "";
    const auto s = sjail::discover_node_driver(search, driver);
    return s.ok() ? "" : "discover: " + s.message();
}

// What the namespace builder does: find the driver (unless `found` already
// did, in the namespace the builder came from), mount its tree into the
// view, build the loader cache and bind it over the view's /etc/ld.so.cache.
// Runs in the caller's (private) mount namespace.
std::string build_view(std::vector<std::string> &notes, const sjail::NodeDriver *found = nullptr) {
    sjail::NodeDriver discovered;
    if (found == nullptr) {
        if (auto e = discover(discovered); !e.empty()) {
            return e;
        }
        found = &discovered;
    }
    const sjail::NodeDriver &driver = *found;
    sjail::DriverPlan plan;
    if (auto s = sjail::plan_driver_view(driver.files, {}, plan); !s.ok()) {
        return "plan: " + s.message();
    }
    Fd jail;
    if (auto s = sjail::open_root_owned_dir(kJail, jail); !s.ok()) {
        return "jail: " + s.message();
    }
    std::vector<std::size_t> skipped;
    if (auto s = sjail::mount_driver_view(jail.get(), plan, driver, notes, skipped); !s.ok()) {
        return "mount: " + s.message();
    }
    auto r = request();
    r.first_dirs = plan.library_dirs;
    if (auto s = sjail::build_loader_cache(r); !s.ok()) {
        return "loader cache: " + s.message();
    }
    if (::mount(kCache.c_str(), (kJail + "/etc/ld.so.cache").c_str(), nullptr, MS_BIND, nullptr) !=
        0) {
        return "bind the loader cache";
    }
    return "";
}

// Runs `fn` in a grandchild with its own mount namespace (the builder's).
std::string as_builder(const std::function<std::string()> &fn) {
    return in_child([&] {
        if (::unshare(CLONE_NEWNS) != 0 ||
            ::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) {
            return std::string("builder namespace");
        }
        return fn();
    });
}

std::string in_jail(const std::vector<std::string> &argv, int &status) {
    std::string out;
    status = fixture::run(argv, &out, kJail);
    return out;
}

std::string build_error(const sjail::LoaderCacheRequest &r) {
    const auto s = sjail::build_loader_cache(r);
    return s.ok() ? "" : s.message();
}

} // namespace

TEST(LoaderCache, JobsFindTheNodesDriverByNameAndTheJailIsUntouched) {
    EXPECT_EQ(
        on_gpu_node(
            "550.54.15",
            [] {
                fixture::make_dirs(kDriver + "/run/nvidia-persistenced");
                fixture::make_dirs(kDriver + "/share/nvidia");
                fixture::write_text(kDriver + "/share/nvidia/nvoptix.bin", "node optix");
                fixture::make_dirs(kDriver + "/etc/OpenCL/vendors");
                fixture::write_text(kDriver + "/etc/OpenCL/vendors/nvidia.icd",
                                    "libnvidia-opencl.so.1\n");
                // nvidia-persistenced listening on its socket, inside the driver root.
                const int daemon = ::socket(AF_UNIX, SOCK_STREAM, 0);
                sockaddr_un addr{};
                addr.sun_family = AF_UNIX;
                const std::string socket_path = kDriver + "/run/nvidia-persistenced/socket";
                socket_path.copy(addr.sun_path, sizeof(addr.sun_path) - 1);
                CHILD_EXPECT(::bind(daemon, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) ==
                                 0 &&
                             ::listen(daemon, 4) == 0);

                const auto before = gpu_sandbox::snapshot(kJail);
                const std::string jail_cache = fixture::read_bytes(kJail + "/etc/ld.so.cache");
                std::string result = as_builder([] {
                    int status = 0;
                    // Control: with the jail's own cache, the driver is not found.
                    std::string out = in_jail({"/usr/local/bin/fake_nvidia_dlopen_probe"}, status);
                    CHILD_EXPECT(status == 1 && contains(out, "libcuda.so.1: cannot open"));
                    std::vector<std::string> notes;
                    if (auto e = build_view(notes); !e.empty()) {
                        return e;
                    }
                    CHILD_EXPECT(
                        notes.size() == 1U &&
                        contains(notes[0], "the jail has no /etc/OpenCL/vendors/nvidia.icd"));
                    out = in_jail({"/usr/local/bin/fake_nvidia_dlopen_probe"}, status);
                    CHILD_EXPECT(status == 0);
                    CHILD_EXPECT(
                        contains(out, "libcuda.so.1=" + kLib64 + "/libcuda.so.1 cuda=12040"));
                    CHILD_EXPECT(contains(out, "libnvidia-ml.so.1=" + kLib64 +
                                                   "/libnvidia-ml.so.1 driver=550.54.15"));
                    out = in_jail({"/usr/local/bin/fake_nvidia_cuda_probe"}, status);
                    CHILD_EXPECT(status == 0);
                    CHILD_EXPECT(contains(
                        out, "cuInit=0 cuDriverGetVersion=0 version=12040 libcuda=" + kLib64 +
                                 "/libcuda.so.1"));
                    out = in_jail({"/usr/local/nvidia/bin/nvidia-smi"}, status);
                    CHILD_EXPECT(status == 0);
                    CHILD_EXPECT(contains(out, "Driver Version: 550.54.15"));
                    CHILD_EXPECT(contains(out, "NVML: " + kLib64 + "/libnvidia-ml.so.1"));
                    // Data files with a mount point are bound; the tree is read-only.
                    CHILD_EXPECT(fixture::read_bytes(kJail + "/usr/share/nvidia/nvoptix.bin") ==
                                 "node optix");
                    CHILD_EXPECT(::open((kJail + "/usr/local/nvidia/lib64/new").c_str(),
                                        O_CREAT | O_WRONLY, 0600) < 0 &&
                                 errno == EROFS);
                    // A job reaches nvidia-persistenced through the bound directory.
                    const pid_t pid = ::fork();
                    if (pid == 0) {
                        const int c = ::socket(AF_UNIX, SOCK_STREAM, 0);
                        sockaddr_un in{};
                        in.sun_family = AF_UNIX;
                        std::string("/run/nvidia-persistenced/socket")
                            .copy(in.sun_path, sizeof(in.sun_path) - 1);
                        const bool ok =
                            ::chroot(kJail.c_str()) == 0 && ::chdir("/") == 0 &&
                            ::connect(c, reinterpret_cast<sockaddr *>(&in), sizeof(in)) == 0;
                        ::_exit(ok ? 0 : 1);
                    }
                    int wstatus = 1;
                    ::waitpid(pid, &wstatus, 0);
                    CHILD_EXPECT(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
                    return std::string();
                });
                if (!result.empty()) {
                    return result;
                }
                // The builder's namespace is gone; the jail is exactly as it was.
                CHILD_EXPECT(fixture::read_bytes(kJail + "/etc/ld.so.cache") == jail_cache);
                const auto after = gpu_sandbox::snapshot(kJail);
                CHILD_EXPECT(after.size() == before.size());
                for (const auto &[path, text] : before) {
                    auto it = after.find(path);
                    if (it == after.end() || it->second != text) {
                        return "jail changed: " + path + ": " + text.substr(0, 120);
                    }
                }
                // The node-local cache lists the driver's directory first.
                sjail::LdCache cache;
                CHILD_EXPECT(sjail::parse_ld_cache(fixture::read_bytes(kCache), cache).ok());
                const auto *cuda =
                    sjail::find_ld_cache_entry(cache, "libcuda.so.1", sjail::kBuildArch);
                CHILD_EXPECT(cuda != nullptr && cuda->path == kLib64 + "/libcuda.so.1");
                const auto *libc =
                    sjail::find_ld_cache_entry(cache, "libc.so.6", sjail::kBuildArch);
                CHILD_EXPECT(libc != nullptr && libc->path == kCachedLibc);
                return std::string();
            }),
        "");
}

TEST(LoaderCache, AfterAnUpgradeARebuiltViewGivesJobsTheNewDriver) {
    EXPECT_EQ(on_gpu_node("550.54.15",
                          [] {
                              const auto version_seen = [] {
                                  return as_builder([] {
                                      std::vector<std::string> notes;
                                      if (auto e = build_view(notes); !e.empty()) {
                                          return e;
                                      }
                                      int status = 0;
                                      return in_jail({"/usr/local/nvidia/bin/nvidia-smi"}, status);
                                  });
                              };
                              CHILD_EXPECT(contains(version_seen(), "Driver Version: 550.54.15"));
                              fs::remove_all(kDriver);
                              gpu_sandbox::make_toolkit_root(kDriver, "580.159.04");
                              CHILD_EXPECT(contains(version_seen(), "Driver Version: 580.159.04"));
                              return std::string();
                          }),
              "");
}

TEST(LoaderCache, ADriverFoundBeforeTheBuildersUnshareIsOpenedAgainAndMustBeTheSame) {
    EXPECT_EQ(on_gpu_node(
                  "550.54.15",
                  [] {
                      // Found in the namespace the builder is forked from: its fds
                      // belong to that namespace's mounts.
                      sjail::NodeDriver driver;
                      if (auto e = discover(driver); !e.empty()) {
                          return e;
                      }
                      std::string out = as_builder([&] {
                          std::vector<std::string> notes;
                          if (auto e = build_view(notes, &driver); !e.empty()) {
                              return e;
                          }
                          int status = 0;
                          return in_jail({"/usr/local/nvidia/bin/nvidia-smi"}, status);
                      });
                      CHILD_EXPECT(contains(out, "Driver Version: 550.54.15"));
                      // The driver is reinstalled between discovery and the build.
                      const std::string lib = kDriver + "/lib64/libcuda.so.550.54.15";
                      fs::remove(lib);
                      fs::copy_file(
                          fixture::fake_driver_dir("550.54.15") + "/lib/libcuda.so.550.54.15", lib);
                      out = as_builder([&] {
                          std::vector<std::string> notes;
                          return build_view(notes, &driver);
                      });
                      CHILD_EXPECT(contains(out, "the NVIDIA driver changed since it was found: " +
                                                     lib + " is another file now"));
                      return std::string();
                  }),
              "");
}

TEST(LoaderCache, AJailCopyOfLibcudaNeverWinsOverTheNodes) {
    EXPECT_EQ(on_gpu_node("550.54.15",
                          [] {
                              // Someone installed a driver package into the shared jail.
                              fixture::install_fake_libs("580.159.04",
                                                         kJail + fixture::kMultiarchLib);
                              gpu_sandbox::refresh_cache(kJail);
                              return as_builder([] {
                                  std::vector<std::string> notes;
                                  if (auto e = build_view(notes); !e.empty()) {
                                      return e;
                                  }
                                  int status = 0;
                                  const std::string out =
                                      in_jail({"/usr/local/bin/fake_nvidia_cuda_probe"}, status);
                                  CHILD_EXPECT(status == 0 &&
                                               contains(out, "version=12040 libcuda=" + kLib64));
                                  return std::string();
                              });
                          }),
              "");
}

TEST(LoaderCache, RefusesAJailWhereUsersCouldAddLibraries) {
    EXPECT_EQ(on_gpu_node(
                  "550.54.15",
                  [] {
                      const std::string lib = kJail + fixture::kMultiarchLib;
                      CHILD_EXPECT(::chmod(lib.c_str(), 0777) == 0);
                      std::string e = build_error(request());
                      CHILD_EXPECT(contains(e, "refusing to build a loader cache"));
                      CHILD_EXPECT(
                          contains(e, fixture::kMultiarchLib +
                                          " is writable by group or others; run: chmod go-w"));
                      CHILD_EXPECT(::chmod(lib.c_str(), 0755) == 0);

                      const std::string conf = kJail + "/etc/ld.so.conf.d/site.conf";
                      fixture::write_text(conf, "/opt/site-libs\n");
                      CHILD_EXPECT(::chown(conf.c_str(), 1000, 1000) == 0);
                      e = build_error(request());
                      CHILD_EXPECT(contains(e, "/etc/ld.so.conf.d/site.conf is owned by uid 1000"));
                      CHILD_EXPECT(::chown(conf.c_str(), 0, 0) == 0);

                      // A directory the conf lists, owned by a user.
                      fixture::make_dirs(kJail + "/opt/site-libs");
                      CHILD_EXPECT(::chown((kJail + "/opt/site-libs").c_str(), 1000, 1000) == 0);
                      e = build_error(request());
                      CHILD_EXPECT(contains(e, "/opt/site-libs is owned by uid 1000"));
                      CHILD_EXPECT(::chown((kJail + "/opt/site-libs").c_str(), 0, 0) == 0);

                      // A user's symlink planted where the conf points.
                      fs::remove(kJail + "/opt/site-libs");
                      fixture::make_dirs("/mnt/user-libs");
                      fs::create_symlink("/mnt/user-libs", kJail + "/opt/site-libs");
                      CHILD_EXPECT(::lchown((kJail + "/opt/site-libs").c_str(), 1000, 1000) == 0);
                      e = build_error(request());
                      CHILD_EXPECT(contains(e, "/opt/site-libs is a symlink owned by uid 1000"));
                      CHILD_EXPECT(!fs::exists(kCache));
                      return std::string();
                  }),
              "");
}

TEST(LoaderCache, AMissingDriverNameIsCaught) {
    EXPECT_EQ(on_gpu_node("550.54.15",
                          [] {
                              return as_builder([] {
                                  // Nothing mounted on /usr/local/nvidia: libcuda.so.1 resolves
                                  // nowhere.
                                  const std::string e = build_error(request());
                                  CHILD_EXPECT(
                                      contains(e, "libcuda.so.1 resolves to nothing, not to the "
                                                  "node's driver"));
                                  CHILD_EXPECT(!fs::exists(kCache));
                                  return std::string();
                              });
                          }),
              "");
}

TEST(LoaderCache, AHangingOrFailingLdconfigIsNamed) {
    EXPECT_EQ(
        on_gpu_node(
            "550.54.15",
            [] {
                fs::copy_file(fixture::probe_path("fake_slow_tool"), "/mnt/node/slow-ldconfig");
                auto r = request();
                r.ldconfig = "/mnt/node/slow-ldconfig";
                r.time_limit_ms = 300;
                std::string e = build_error(r);
                CHILD_EXPECT(contains(e, "ldconfig did not finish within 300 ms and was killed"));
                fs::copy_file("/bin/false", "/mnt/node/false");
                r.ldconfig = "/mnt/node/false";
                e = build_error(r);
                CHILD_EXPECT(contains(e, "ldconfig over the jail view failed"));
                r.ldconfig = "/mnt/node/absent";
                e = build_error(r);
                CHILD_EXPECT(contains(e, "ldconfig /mnt/node/absent: /mnt/node/absent: No such "
                                         "file"));
                CHILD_EXPECT(!fs::exists(kCache));
                return std::string();
            }),
        "");
}

// Ubuntu's /sbin/ldconfig is a shell script running /sbin/ldconfig.real.
// Root runs the ELF program beside it and never the script; with no program
// beside it, the build stops naming both and the fix.
TEST(LoaderCache, UbuntusLdconfigWrapperIsNeverRunTheProgramBesideItIs) {
    EXPECT_EQ(
        on_gpu_node(
            "550.54.15",
            [] {
                fixture::make_dirs("/mnt/node/sbin");
                fixture::write_text("/mnt/node/sbin/ldconfig",
                                    "#!/bin/sh\ntouch /mnt/node/wrapper-ran\n"
                                    "exec /mnt/node/sbin/ldconfig.real \"$@\"\n");
                ::chmod("/mnt/node/sbin/ldconfig", 0755);
                return as_builder([] {
                    std::vector<std::string> notes;
                    auto r = request();
                    r.ldconfig = "/mnt/node/sbin/ldconfig";
                    const std::string refused = build_error(r);
                    CHILD_EXPECT(contains(refused, "/mnt/node/sbin/ldconfig is a script"));
                    CHILD_EXPECT(contains(refused, "/mnt/node/sbin/ldconfig.real, is missing"));
                    CHILD_EXPECT(!fs::exists(kCache));
                    fs::copy_file("/sbin/ldconfig", "/mnt/node/sbin/ldconfig.real");
                    sjail::NodeDriver driver;
                    if (auto e = discover(driver); !e.empty()) {
                        return e;
                    }
                    sjail::DriverPlan plan;
                    Fd jail;
                    CHILD_EXPECT(sjail::plan_driver_view(driver.files, {}, plan).ok());
                    CHILD_EXPECT(sjail::open_root_owned_dir(kJail, jail).ok());
                    std::vector<std::size_t> skipped;
                    CHILD_EXPECT(
                        sjail::mount_driver_view(jail.get(), plan, driver, notes, skipped).ok());
                    r.first_dirs = plan.library_dirs;
                    CHILD_EXPECT(build_error(r).empty());
                    CHILD_EXPECT(fs::exists(kCache));
                    CHILD_EXPECT(!fs::exists("/mnt/node/wrapper-ran"));
                    return std::string();
                });
            }),
        "");
}

TEST(LoaderCache, TheJailsOwnCacheStampsWhatTheNodeCacheWasBuiltFrom) {
    EXPECT_EQ(
        on_gpu_node("550.54.15",
                    [] {
                        std::string first;
                        std::string again;
                        std::string after;
                        CHILD_EXPECT(sjail::jail_loader_stamp(kJail, first).ok());
                        CHILD_EXPECT(sjail::jail_loader_stamp(kJail, again).ok() && again == first);
                        CHILD_EXPECT(contains(first, "jail-ld.so.cache dev="));
                        // A package adds a library to the jail; its ldconfig trigger runs.
                        fixture::install_fake_libs("580.159.04", kJail + "/opt/pkg");
                        fixture::write_text(kJail + "/etc/ld.so.conf.d/pkg.conf", "/opt/pkg\n");
                        gpu_sandbox::refresh_cache(kJail);
                        CHILD_EXPECT(sjail::jail_loader_stamp(kJail, after).ok() && after != first);
                        fs::remove(kJail + "/etc/ld.so.cache");
                        CHILD_EXPECT(sjail::jail_loader_stamp(kJail, after).ok() &&
                                     after == "jail-ld.so.cache none\n");
                        return std::string();
                    }),
        "");
}

TEST(LoaderCache, BadRequestsAreRefused) {
    auto r = request();
    r.output = "relative/ld.so.cache";
    EXPECT_NE(build_error(r).find("output=relative/ld.so.cache is not absolute"),
              std::string::npos);
    r = request();
    r.time_limit_ms = 0;
    EXPECT_NE(build_error(r).find("time limit must be positive"), std::string::npos);
    r = request();
    r.first_dirs = {"usr/local/nvidia/lib64"};
    EXPECT_NE(build_error(r).find("first_dirs=usr/local/nvidia/lib64 is not absolute"),
              std::string::npos);
}
