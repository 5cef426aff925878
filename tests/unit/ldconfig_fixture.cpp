// SPDX-License-Identifier: Apache-2.0
#include "ldconfig_fixture.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace fixture {

TempDir::TempDir() {
    std::string pattern = "/tmp/sjail-test-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
        throw std::runtime_error("mkdtemp failed");
    }
    path_ = pattern;
}

TempDir::~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
}

void make_dirs(const std::string &path) {
    fs::create_directories(path);
}

void write_text(const std::string &path, const std::string &text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) {
        throw std::runtime_error("cannot write " + path);
    }
}

std::string read_bytes(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw std::runtime_error("cannot read " + path);
    }
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string fake_driver_dir(const std::string &version) {
    return std::string(FAKE_NVIDIA_DRIVER_DIR) + "/" + version;
}

std::string probe_path(const std::string &name) {
    return std::string(FAKE_NVIDIA_DRIVER_DIR) + "/probes/" + name;
}

void install_fake_libs(const std::string &version, const std::string &dir) {
    make_dirs(dir);
    const fs::path from = fake_driver_dir(version) + "/lib";
    if (!fs::exists(from / ("libcuda.so." + version))) {
        throw std::runtime_error("fake driver " + version + " is not built in " + from.string());
    }
    for (const auto &entry : fs::directory_iterator(from)) {
        const fs::path to = fs::path(dir) / entry.path().filename();
        if (entry.is_symlink()) {
            fs::create_symlink(fs::read_symlink(entry.path()), to);
        } else {
            fs::copy_file(entry.path(), to, fs::copy_options::overwrite_existing);
        }
    }
}

void install_host_libc(const std::string &lib_dir) {
    make_dirs(lib_dir);
    fs::copy_file(kMultiarchLib + "/libc.so.6", lib_dir + "/libc.so.6",
                  fs::copy_options::overwrite_existing);
    fs::copy_file(kMultiarchLib + "/" + kLoaderName, lib_dir + "/" + kLoaderName,
                  fs::copy_options::overwrite_existing);
}

std::string machine_file(const std::string &path) {
    return std::string(SJAIL_TEST_MACHINE_ROOT) + path;
}

std::vector<std::string> ldconfig_argv() {
    std::vector<std::string> argv;
    if (!std::string_view(SJAIL_TEST_EMULATOR).empty()) {
        argv.emplace_back(SJAIL_TEST_EMULATOR);
    }
    argv.emplace_back(SJAIL_TEST_LDCONFIG);
    return argv;
}

int run_capturing(const std::function<void()> &exec, std::string &output) {
    int fds[2];
    if (::pipe(fds) != 0) {
        return -1;
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(fds[1], 1);
        ::dup2(fds[1], 2);
        ::close(fds[0]);
        ::close(fds[1]);
        exec();
        ::_exit(127);
    }
    ::close(fds[1]);
    output.clear();
    char buf[4096];
    ssize_t n = 0;
    while ((n = ::read(fds[0], buf, sizeof(buf))) > 0) {
        output.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

int run(const std::vector<std::string> &argv, std::string *output, const std::string &root) {
    std::vector<char *> args;
    for (const auto &a : argv) {
        args.push_back(const_cast<char *>(a.c_str()));
    }
    args.push_back(nullptr);
    std::string text;
    const int status = run_capturing(
        [&] {
            if (root.empty()) {
                ::execv(args[0], args.data());
                ::_exit(127);
            }
            if (::chroot(root.c_str()) != 0 || ::chdir("/") != 0) {
                ::_exit(126);
            }
            char path[] = "PATH=/usr/local/bin:/usr/bin:/bin";
            char *env[] = {path, nullptr};
            ::execve(args[0], args.data(), env);
        },
        text);
    if (status < 0) {
        throw std::runtime_error("pipe failed");
    }
    if (output != nullptr) {
        *output = text;
    }
    return status;
}

std::string make_cache(const std::string &root, const std::vector<std::string> &extra) {
    std::vector<std::string> argv = ldconfig_argv();
    argv.insert(argv.end(), {"-X", "-r", root, "-C", "/ld.so.cache", "-f", "/etc/ld.so.conf"});
    argv.insert(argv.end(), extra.begin(), extra.end());
    std::string out;
    if (run(argv, &out) != 0) {
        throw std::runtime_error("ldconfig failed: " + out);
    }
    return root + "/ld.so.cache";
}

namespace {

// glibc's "glibc-ld.so.cache1.1" layout: the entry count, then 24-byte
// entries (flags, name offset, path offset, ...) after the 48-byte header.
constexpr std::size_t kCountAt = 20;
constexpr std::size_t kEntriesAt = 48;
constexpr std::size_t kEntrySize = 24;
constexpr std::size_t kPathAt = 8;

std::uint32_t u32_at(const std::string &bytes, std::size_t at) {
    if (at + 4 > bytes.size()) {
        throw std::runtime_error("loader cache truncated at " + std::to_string(at));
    }
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < 4; ++i) {
        v |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
    }
    return v;
}

} // namespace

std::string with_entry_flags(std::string bytes, const std::string &path_prefix,
                             std::int32_t flags) {
    const std::uint32_t count = u32_at(bytes, kCountAt);
    for (std::size_t i = 0; i < count; ++i) {
        const std::size_t at = kEntriesAt + i * kEntrySize;
        const std::size_t path = u32_at(bytes, at + kPathAt);
        if (path >= bytes.size()) {
            throw std::runtime_error("loader cache entry " + std::to_string(i) + " has no path");
        }
        if (std::string_view(bytes.c_str() + path).starts_with(path_prefix)) {
            for (std::size_t k = 0; k < 4; ++k) {
                bytes[at + k] =
                    static_cast<char>((static_cast<std::uint32_t>(flags) >> (8 * k)) & 0xffU);
            }
        }
    }
    return bytes;
}

std::vector<std::string> ldconfig_print(const std::string &cache) {
    std::string out;
    std::vector<std::string> argv = ldconfig_argv();
    argv.insert(argv.end(), {"-p", "-C", cache});
    if (run(argv, &out) != 0) {
        throw std::runtime_error("ldconfig -p failed: " + out);
    }
    std::vector<std::string> entries;
    std::istringstream lines(out);
    std::string line;
    while (std::getline(lines, line)) {
        // "\tlibz.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libz.so.1"
        const auto arrow = line.find(" => ");
        const auto paren = line.find(" (");
        if (line.empty() || line[0] != '\t' || arrow == std::string::npos ||
            paren == std::string::npos) {
            continue;
        }
        entries.push_back(line.substr(1, paren - 1) + "|" + line.substr(arrow + 4));
    }
    return entries;
}

} // namespace fixture
