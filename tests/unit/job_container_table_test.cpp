// SPDX-License-Identifier: Apache-2.0
// job_container/slurm_jail and chroot.so meet through one versioned table.
// Loaded beside a chroot.so of this build the shim works; beside one of
// another table version, or with none, it refuses with a message that says
// what to do. Each case runs in a child: a loaded chroot.so stays loaded.
#include "kit/child.hpp"

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <dlfcn.h>
#include <functional>
#include <gtest/gtest.h>
#include <string>
#include <sys/types.h>

namespace {

std::string last_error;

} // namespace

// The shim logs through Slurm's slurm_error; this test binary provides it.
extern "C" __attribute__((visibility("default"))) void slurm_error(const char *fmt, ...) {
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    last_error = text;
}

namespace {

using CreateFn = int (*)(uint32_t, uid_t);
using JoinFn = int (*)(uint32_t, uid_t);

// Loads `chroot` (empty: none) the way Slurm does, then the shim; runs `check`.
std::string with_shim(const char *chroot, const std::function<std::string(void *)> &check) {
    return kit::in_child([&]() -> std::string {
        if (chroot[0] != '\0' && ::dlopen(chroot, RTLD_NOW | RTLD_GLOBAL) == nullptr) {
            return std::string("dlopen fake chroot.so: ") + ::dlerror();
        }
        void *shim = ::dlopen(JOB_CONTAINER_SHIM, RTLD_NOW);
        if (shim == nullptr) {
            return std::string("dlopen the shim: ") + ::dlerror();
        }
        return check(shim);
    });
}

int create(void *shim) {
    return reinterpret_cast<CreateFn>(::dlsym(shim, "container_p_create"))(7, 1000);
}

} // namespace

TEST(JobContainerTable, AChrootSoOfThisBuildIsUsed) {
    EXPECT_EQ(with_shim(FAKE_CHROOT_CURRENT,
                        [](void *shim) -> std::string {
                            if (create(shim) != 0) {
                                return "container_p_create failed: " + last_error;
                            }
                            const auto join =
                                reinterpret_cast<JoinFn>(::dlsym(shim, "container_p_join"));
                            return join(7, 1000) == 0 ? "" : "join failed: " + last_error;
                        }),
              "");
}

TEST(JobContainerTable, AChrootSoOfAnotherTableVersionIsRefusedLoudly) {
    EXPECT_EQ(with_shim(FAKE_CHROOT_OTHER,
                        [](void *shim) -> std::string {
                            if (create(shim) == 0) {
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
    EXPECT_EQ(with_shim("",
                        [](void *shim) -> std::string {
                            if (create(shim) == 0) {
                                return "the shim worked without chroot.so";
                            }
                            return last_error.find("put it in plugstack.conf") == std::string::npos
                                       ? "unclear message: " + last_error
                                       : "";
                        }),
              "");
}
