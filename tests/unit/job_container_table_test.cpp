// SPDX-License-Identifier: Apache-2.0
// job_container/slurm_jail (namespace/slurm_jail from Slurm 25.11) and
// chroot.so meet through one versioned table. Loaded beside a chroot.so of
// this build the plugin works; beside one of another table version, or with
// none, it refuses with a message that says what to do. Each case runs in a
// child: a loaded chroot.so stays loaded. The plugin is called through the
// interface the building Slurm release looks up.
#include "kit/child.hpp"

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/slurm_version.h>
}

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <dlfcn.h>
#include <functional>
#include <gtest/gtest.h>
#include <sched.h>
#include <string>
#include <sys/types.h>
#include <vector>

namespace {

std::string last_error;

} // namespace

// The plugin logs through Slurm's slurm_error; this test binary provides it.
extern "C" __attribute__((visibility("default"))) void slurm_error(const char *fmt, ...) {
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    last_error = text;
}

#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 11, 0)
namespace {
std::vector<ns_fd_map_t> appended;
} // namespace

// From 25.11 the plugin fills slurmstepd's list with slurm_list_append.
extern "C" __attribute__((visibility("default"))) void slurm_list_append(list_t * /*l*/, void *x) {
    appended.push_back(*static_cast<ns_fd_map_t *>(x));
}
#endif

namespace {

constexpr uint32_t kJob = 7;
constexpr uid_t kUser = 1000;

// Loads `chroot` (empty: none) the way Slurm does, then the plugin; runs `check`.
std::string with_plugin(const char *chroot, const std::function<std::string(void *)> &check) {
    return kit::in_child([&]() -> std::string {
        if (chroot[0] != '\0' && ::dlopen(chroot, RTLD_NOW | RTLD_GLOBAL) == nullptr) {
            return std::string("dlopen fake chroot.so: ") + ::dlerror();
        }
        void *plugin = ::dlopen(JOB_CONTAINER_SHIM, RTLD_NOW);
        if (plugin == nullptr) {
            return std::string("dlopen the plugin: ") + ::dlerror();
        }
        return check(plugin);
    });
}

template <typename F> F entry(void *plugin, const char *name) {
    return reinterpret_cast<F>(::dlsym(plugin, name));
}

std::string plugin_type(void *plugin) {
    const auto *type = static_cast<const char *>(::dlsym(plugin, "plugin_type"));
    return type == nullptr ? "" : type;
}

#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 11, 0)
constexpr const char *kPluginType = "namespace/slurm_jail";

slurm_step_id_t step_of_job() {
    slurm_step_id_t id{};
    id.job_id = kJob;
    id.step_id = 0;
    id.step_het_comp = NO_VAL;
    return id;
}

// The tasks view's fd for pam_slurm_adopt, or -1.
int join_external(void *plugin) {
    using Fn = int (*)(slurm_step_id_t *, list_t *);
    slurm_step_id_t id = step_of_job();
    appended.clear();
    if (entry<Fn>(plugin, "namespace_p_join_external")(&id, nullptr) != SLURM_SUCCESS) {
        return -1;
    }
    return appended.size() == 1 && appended[0].type == CLONE_NEWNS ? appended[0].fd : -2;
}

int join(void *plugin, bool step_create) {
    using Fn = int (*)(slurm_step_id_t *, uid_t, bool);
    slurm_step_id_t id = step_of_job();
    return entry<Fn>(plugin, "namespace_p_join")(&id, kUser, step_create);
}
#else
constexpr const char *kPluginType = "job_container/slurm_jail";

int join_external(void *plugin) {
    using Fn = int (*)(uint32_t);
    return entry<Fn>(plugin, "container_p_join_external")(kJob);
}

#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(24, 11, 0)
int join(void *plugin, bool step_create) {
    using Fn = int (*)(slurm_step_id_t *, uid_t, bool);
    slurm_step_id_t id{};
    id.job_id = kJob;
    id.step_id = 0;
    id.step_het_comp = NO_VAL;
    return entry<Fn>(plugin, "container_p_join")(&id, kUser, step_create);
}
#else
int join(void *plugin, bool /*step_create*/) {
    using Fn = int (*)(uint32_t, uid_t);
    return entry<Fn>(plugin, "container_p_join")(kJob, kUser);
}
#endif
#endif

} // namespace

TEST(JobContainerTable, ThePluginIsOfTheInterfaceThisSlurmLoads) {
    EXPECT_EQ(with_plugin(FAKE_CHROOT_CURRENT,
                          [](void *plugin) -> std::string {
                              return plugin_type(plugin) == kPluginType
                                         ? ""
                                         : "plugin_type is " + plugin_type(plugin);
                          }),
              "");
}

TEST(JobContainerTable, AChrootSoOfThisBuildIsUsed) {
    EXPECT_EQ(with_plugin(FAKE_CHROOT_CURRENT,
                          [](void *plugin) -> std::string {
                              if (const int fd = join_external(plugin); fd != FAKE_TASKS_VIEW_FD) {
                                  return "join_external gave " + std::to_string(fd) + ": " +
                                         last_error;
                              }
                              return join(plugin, false) == SLURM_SUCCESS
                                         ? ""
                                         : "join failed: " + last_error;
                          }),
              "");
}

TEST(JobContainerTable, AChrootSoOfAnotherTableVersionIsRefusedLoudly) {
    EXPECT_EQ(with_plugin(FAKE_CHROOT_OTHER,
                          [](void *plugin) -> std::string {
                              if (join_external(plugin) != -1) {
                                  return "a table of another version was used";
                              }
                              if (last_error.find("chroot.so comes from another build") ==
                                      std::string::npos ||
                                  last_error.find("install both plugins from the same") ==
                                      std::string::npos) {
                                  return "unclear message: " + last_error;
                              }
                              return "";
                          }),
              "");
}

TEST(JobContainerTable, NoChrootSoIsRefusedWithTheFix) {
    EXPECT_EQ(with_plugin("",
                          [](void *plugin) -> std::string {
                              if (join_external(plugin) != -1) {
                                  return "the plugin worked without chroot.so";
                              }
                              return last_error.find("put it in plugstack.conf") ==
                                             std::string::npos
                                         ? "unclear message: " + last_error
                                         : "";
                          }),
              "");
}

#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(24, 11, 0)
// slurmd's child that becomes a step's slurmstepd stays on the node (Slurm
// asks from 24.11): without chroot.so it would otherwise go to the dead end,
// and not return.
TEST(JobContainerTable, TheChildThatBecomesSlurmstepdStaysOnTheNode) {
    EXPECT_EQ(with_plugin("",
                          [](void *plugin) -> std::string {
                              return join(plugin, true) == SLURM_SUCCESS
                                         ? ""
                                         : "step_create join failed: " + last_error;
                          }),
              "");
}
#endif

#if SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(24, 5, 0)
// Up to 23.11 slurmd calls container_p_create when a job starts on the node:
// without chroot.so the job does not start.
TEST(JobContainerTable, AJobDoesNotStartWithoutChrootSo) {
    EXPECT_EQ(with_plugin("",
                          [](void *plugin) -> std::string {
                              using Fn = int (*)(uint32_t, uid_t);
                              return entry<Fn>(plugin, "container_p_create")(kJob, kUser) ==
                                             SLURM_SUCCESS
                                         ? "container_p_create worked without chroot.so"
                                         : "";
                          }),
              "");
}
#endif
