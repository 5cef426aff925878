// SPDX-License-Identifier: Apache-2.0
#include "gpu_step.hpp"

#include "gpu_sandbox.hpp"
#include "kit/child.hpp"
#include "ldconfig_fixture.hpp"
#include "sjail/sys/job/step_entry.hpp"

#include <cstdlib>
#include <filesystem>
#include <unistd.h>

namespace gpu_step {
namespace {

bool contains(const std::string &text, const std::string &part) {
    return text.find(part) != std::string::npos;
}

} // namespace

void add_nvidia_smi_link(const std::string &jail) {
    std::filesystem::create_symlink("/usr/local/nvidia/bin/nvidia-smi",
                                    jail + "/usr/local/bin/nvidia-smi");
}

void add_cat(const std::string &jail) {
    std::filesystem::copy_file("/usr/bin/cat", jail + "/usr/local/bin/cat");
}

int run_as_step(const sjail::Config &config, const std::vector<std::string> &argv,
                std::string &output) {
    std::vector<char *> args;
    args.reserve(argv.size() + 1);
    for (const auto &a : argv) {
        args.push_back(const_cast<char *>(a.c_str()));
    }
    args.push_back(nullptr);
    return fixture::run_capturing(
        [&] {
            if (auto s = sjail::enter_node_jail(config); !s.ok()) {
                const std::string line = "ENTRY FAILED: " + s.message() + "\n";
                [[maybe_unused]] const ssize_t n = ::write(1, line.data(), line.size());
                ::_exit(125);
            }
            ::setenv("PATH", "/usr/local/bin:/usr/bin:/bin", 1);
            ::unsetenv("LD_LIBRARY_PATH");
            ::execvp(args[0], args.data());
        },
        output);
}

std::string expect_driver(const sjail::Config &config, const std::string &version,
                          const std::string &cuda) {
    std::string out;
    int status = run_as_step(config, {"fake_nvidia_dlopen_probe"}, out);
    CHILD_EXPECT(status == 0);
    CHILD_EXPECT(contains(out, "libcuda.so.1=" + kLib64 + "/libcuda.so.1 cuda=" + cuda));
    CHILD_EXPECT(
        contains(out, "libnvidia-ml.so.1=" + kLib64 + "/libnvidia-ml.so.1 driver=" + version));
    status = run_as_step(config, {"fake_nvidia_cuda_probe"}, out);
    CHILD_EXPECT(status == 0 && contains(out, "version=" + cuda + " libcuda=" + kLib64));
    status = run_as_step(config, {"nvidia-smi"}, out);
    CHILD_EXPECT(status == 0 && contains(out, "Driver Version: " + version));
    return "";
}

std::string jail_changes(const std::string &jail,
                         const std::map<std::string, std::string> &before) {
    const auto after = gpu_sandbox::snapshot(jail);
    if (after.size() != before.size()) {
        return "the jail has " + std::to_string(after.size()) + " entries, had " +
               std::to_string(before.size());
    }
    for (const auto &[path, text] : before) {
        auto it = after.find(path);
        if (it == after.end() || it->second != text) {
            return "jail changed: " + path;
        }
    }
    return "";
}

} // namespace gpu_step
