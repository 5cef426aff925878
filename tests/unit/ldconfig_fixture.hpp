// SPDX-License-Identifier: Apache-2.0
// Helpers for tests that need real loader caches: temporary trees of real
// ELF files (copies of the fake NVIDIA drivers and of the host's libc) and
// the build architecture's ldconfig run over them. Errors throw std::runtime_error.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace fixture {

// A fresh directory under /tmp, removed with everything in it on destruction.
class TempDir {
  public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir &) = delete;
    TempDir &operator=(const TempDir &) = delete;
    [[nodiscard]] const std::string &path() const { return path_; }

  private:
    std::string path_;
};

void make_dirs(const std::string &path);
void write_text(const std::string &path, const std::string &text);
std::string read_bytes(const std::string &path);

// Copies the fake driver VERSION's lib/ (real files and soname links) into `dir`.
void install_fake_libs(const std::string &version, const std::string &dir);
// The fake driver's bin/nvidia-smi, and a probe by name, as built.
std::string fake_driver_dir(const std::string &version);
std::string probe_path(const std::string &name);

// The multiarch library directory, as on the host ("/usr/lib/x86_64-linux-gnu").
inline const std::string kMultiarchLib = std::string("/usr/lib/") + SJAIL_MULTIARCH;

// The build's loader, as its file is named in kMultiarchLib.
#if defined(__x86_64__)
inline constexpr const char *kLoaderName = "ld-linux-x86-64.so.2";
#elif defined(__aarch64__)
inline constexpr const char *kLoaderName = "ld-linux-aarch64.so.1";
#endif

// Copies the host's libc (and the loader) into `lib_dir`: the build
// architecture's, from kMultiarchLib (a cross build's, from the multiarch
// packages installed beside the host's own).
void install_host_libc(const std::string &lib_dir);

// PATH (absolute) on the machine the tests run for: the host's own file, or
// for a cross build the one in the target's root (SJAIL_TEST_MACHINE_ROOT,
// e.g. arm64's /bin/sh and the loader cache arm64's ldconfig wrote there).
std::string machine_file(const std::string &path);

// The ldconfig that make_cache and ldconfig_print run, as argv: the build
// architecture's ldconfig (SJAIL_TEST_LDCONFIG, /sbin/ldconfig unless a cross
// build names the target's), behind the emulator when the build is a cross
// build (SJAIL_TEST_EMULATOR, empty otherwise).
std::vector<std::string> ldconfig_argv();

// Forks a child whose stdout and stderr go to `output`; `exec` runs there and
// ends it (an exec, or _exit). Returns the child's exit status (128: killed),
// or -1 when no pipe could be made.
int run_capturing(const std::function<void()> &exec, std::string &output);

// Runs a program (no shell) and returns its exit status (126: chroot failed,
// 127: exec failed, 128: killed); output gets stdout+stderr. With `root`, the
// program runs chrooted there with a plain environment (PATH only).
int run(const std::vector<std::string> &argv, std::string *output = nullptr,
        const std::string &root = "");

// ldconfig -X -r ROOT -C /ld.so.cache -f /etc/ld.so.conf EXTRA... (ldconfig_argv());
// returns ROOT/ld.so.cache.
std::string make_cache(const std::string &root, const std::vector<std::string> &extra = {});

// The cache `bytes` (as make_cache writes it) with the flags of every entry
// whose path starts with `path_prefix` set to `flags`: the cache that the
// ldconfig of another architecture writes for the same files, whose entries
// differ only in the ABI their flags name (e.g. 0x0a03 for aarch64).
std::string with_entry_flags(std::string bytes, const std::string &path_prefix, std::int32_t flags);

// What `ldconfig -p -C CACHE` lists: "name|path" per entry, in order.
std::vector<std::string> ldconfig_print(const std::string &cache);

} // namespace fixture
