// SPDX-License-Identifier: Apache-2.0
#include "nvml_probe.hpp"

#include "nvml_api.hpp"

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <stdexcept>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace sjh {
namespace {

using Clock = std::chrono::steady_clock;

// Function pointers resolved from the library.
struct Api {
    nvmlReturn_t (*init)() = nullptr;
    nvmlReturn_t (*shutdown)() = nullptr;
    const char *(*error_string)(nvmlReturn_t) = nullptr;
    nvmlReturn_t (*count)(unsigned *) = nullptr;
    nvmlReturn_t (*handle)(unsigned, nvmlDevice_t *) = nullptr;
    nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned) = nullptr;
    nvmlReturn_t (*serial)(nvmlDevice_t, char *, unsigned) = nullptr;
    nvmlReturn_t (*pci)(nvmlDevice_t, nvmlPciInfo_t *) = nullptr;
    nvmlReturn_t (*ecc)(nvmlDevice_t, int, int, unsigned long long *) = nullptr;
    nvmlReturn_t (*retired_pending)(nvmlDevice_t, nvmlEnableState_t *) = nullptr;
    nvmlReturn_t (*remapped)(nvmlDevice_t, unsigned *, unsigned *, unsigned *,
                             unsigned *) = nullptr;
    nvmlReturn_t (*gen)(nvmlDevice_t, unsigned *) = nullptr;
    nvmlReturn_t (*gen_max)(nvmlDevice_t, unsigned *) = nullptr;
    nvmlReturn_t (*width)(nvmlDevice_t, unsigned *) = nullptr;
    nvmlReturn_t (*width_max)(nvmlDevice_t, unsigned *) = nullptr;
    nvmlReturn_t (*nvlink_state)(nvmlDevice_t, unsigned, nvmlEnableState_t *) = nullptr;
    nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned *) = nullptr;
    nvmlReturn_t (*temp_threshold)(nvmlDevice_t, int, unsigned *) = nullptr;
    nvmlReturn_t (*throttle)(nvmlDevice_t, unsigned long long *) = nullptr;
};

template <typename F> void bind(void *lib, const char *symbol, F &fn, bool required) {
    fn = reinterpret_cast<F>(::dlsym(lib, symbol)); // NOLINT: dlsym returns void*
    if (fn == nullptr && required) {
        throw std::runtime_error(
            fmt::format("the NVML library has no symbol {} (driver too old?)", symbol));
    }
}

Api load_api(const std::string &library) {
    void *lib = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
        const char *err = ::dlerror();
        throw std::runtime_error(
            fmt::format("cannot load NVML library '{}': {}; is the NVIDIA driver installed? (set "
                        "--nvml-library to its path)",
                        library, err != nullptr ? err : "unknown error"));
    }
    Api a;
    bind(lib, "nvmlInit_v2", a.init, true);
    bind(lib, "nvmlShutdown", a.shutdown, true);
    bind(lib, "nvmlErrorString", a.error_string, true);
    bind(lib, "nvmlDeviceGetCount_v2", a.count, true);
    bind(lib, "nvmlDeviceGetHandleByIndex_v2", a.handle, true);
    bind(lib, "nvmlDeviceGetName", a.name, true);
    bind(lib, "nvmlDeviceGetSerial", a.serial, false);
    bind(lib, "nvmlDeviceGetPciInfo_v3", a.pci, true);
    bind(lib, "nvmlDeviceGetTotalEccErrors", a.ecc, true);
    bind(lib, "nvmlDeviceGetRetiredPagesPendingStatus", a.retired_pending, true);
    bind(lib, "nvmlDeviceGetRemappedRows", a.remapped, false);
    bind(lib, "nvmlDeviceGetCurrPcieLinkGeneration", a.gen, true);
    bind(lib, "nvmlDeviceGetMaxPcieLinkGeneration", a.gen_max, true);
    bind(lib, "nvmlDeviceGetCurrPcieLinkWidth", a.width, true);
    bind(lib, "nvmlDeviceGetMaxPcieLinkWidth", a.width_max, true);
    bind(lib, "nvmlDeviceGetNvLinkState", a.nvlink_state, false);
    bind(lib, "nvmlDeviceGetTemperature", a.temperature, true);
    bind(lib, "nvmlDeviceGetTemperatureThreshold", a.temp_threshold, true);
    bind(lib, "nvmlDeviceGetCurrentClocksEventReasons", a.throttle, false);
    if (a.throttle == nullptr) {
        bind(lib, "nvmlDeviceGetCurrentClocksThrottleReasons", a.throttle, true);
    }
    return a;
}

// Child side: writes "call GPU NAME" before every NVML call and ends with
// "snapshot JSON" or "error MESSAGE".
class Reporter {
  public:
    explicit Reporter(int fd) : fd_(fd) {}
    void line(const std::string &s) const {
        const std::string l = s + "\n";
        std::size_t done = 0;
        while (done < l.size()) {
            const auto n = ::write(fd_, l.data() + done, l.size() - done);
            if (n <= 0) {
                return;
            }
            done += static_cast<std::size_t>(n);
        }
    }
    void call(unsigned gpu, const char *fn) const { line(fmt::format("call {} {}", gpu, fn)); }

  private:
    int fd_;
};

class GpuReader {
  public:
    GpuReader(const Api &api, const Reporter &rep, GpuSnapshot &g, nvmlDevice_t dev)
        : api_(api), rep_(rep), g_(g), dev_(dev) {}

    // Runs one query; true on success. NOT_SUPPORTED leaves the field absent;
    // a lost GPU is recorded; anything else is kept as an error line.
    template <typename Fn> bool query(const char *name, Fn &&fn) {
        if (!g_.lost.empty()) {
            return false;
        }
        rep_.call(g_.index, name);
        const nvmlReturn_t rc = fn(dev_);
        if (rc == nvml::kSuccess) {
            return true;
        }
        if (rc == nvml::kErrorGpuIsLost || rc == nvml::kErrorResetRequired) {
            g_.lost = fmt::format("{} says: {} (GPU lost or fallen off the bus)", name,
                                  api_.error_string(rc));
        } else if (rc != nvml::kErrorNotSupported) {
            g_.errors.push_back(fmt::format("{}: {} ({})", name, api_.error_string(rc), rc));
        }
        return false;
    }

  private:
    const Api &api_;
    const Reporter &rep_;
    GpuSnapshot &g_;
    nvmlDevice_t dev_;
};

void read_links(const Api &a, GpuReader &r, GpuSnapshot &g) {
    unsigned v = 0;
    unsigned m = 0;
    if (r.query("nvmlDeviceGetCurrPcieLinkGeneration", [&](auto d) { return a.gen(d, &v); }) &&
        r.query("nvmlDeviceGetMaxPcieLinkGeneration", [&](auto d) { return a.gen_max(d, &m); })) {
        g.pcie_gen = v;
        g.pcie_gen_max = m;
    }
    if (r.query("nvmlDeviceGetCurrPcieLinkWidth", [&](auto d) { return a.width(d, &v); }) &&
        r.query("nvmlDeviceGetMaxPcieLinkWidth", [&](auto d) { return a.width_max(d, &m); })) {
        g.pcie_width = v;
        g.pcie_width_max = m;
    }
    if (a.nvlink_state == nullptr || !g.lost.empty()) {
        return;
    }
    unsigned total = 0;
    for (unsigned link = 0; link < nvml::kNvlinkMaxLinks && g.lost.empty(); ++link) {
        nvmlEnableState_t active = 0;
        nvmlReturn_t rc = nvml::kSuccess;
        // Links that do not exist answer NOT_SUPPORTED or INVALID_ARGUMENT.
        const bool ok = r.query("nvmlDeviceGetNvLinkState", [&](auto d) {
            rc = a.nvlink_state(d, link, &active);
            return rc == nvml::kErrorInvalidArgument || rc == nvml::kErrorNotFound
                       ? nvml::kErrorNotSupported
                       : rc;
        });
        if (ok) {
            ++total;
            if (active == 0) {
                g.nvlinks_inactive.push_back(link);
            }
        }
    }
    if (total > 0) {
        g.nvlinks_total = total;
    }
}

GpuSnapshot read_gpu(const Api &a, const Reporter &rep, unsigned index) {
    GpuSnapshot g;
    g.index = index;
    rep.call(index, "nvmlDeviceGetHandleByIndex_v2");
    nvmlDevice_t dev = nullptr;
    const nvmlReturn_t rc = a.handle(index, &dev);
    if (rc != nvml::kSuccess) {
        g.lost = fmt::format("nvmlDeviceGetHandleByIndex_v2 says: {} (GPU lost or fallen off "
                             "the bus)",
                             a.error_string(rc));
        return g;
    }
    GpuReader r(a, rep, g, dev);
    nvmlPciInfo_t pci{};
    if (r.query("nvmlDeviceGetPciInfo_v3", [&](auto d) { return a.pci(d, &pci); })) {
        g.bus_id = pci.busId;
    }
    std::array<char, 96> name{};
    if (r.query("nvmlDeviceGetName", [&](auto d) { return a.name(d, name.data(), name.size()); })) {
        g.name = name.data();
    }
    std::array<char, 96> serial{};
    if (a.serial != nullptr && r.query("nvmlDeviceGetSerial", [&](auto d) {
            return a.serial(d, serial.data(), serial.size());
        })) {
        g.serial = serial.data();
    }
    unsigned long long ecc = 0;
    if (r.query("nvmlDeviceGetTotalEccErrors", [&](auto d) {
            return a.ecc(d, nvml::kMemoryErrorUncorrected, nvml::kVolatileEcc, &ecc);
        })) {
        g.ecc_uncorrected_volatile = ecc;
    }
    nvmlEnableState_t pending = 0;
    if (r.query("nvmlDeviceGetRetiredPagesPendingStatus",
                [&](auto d) { return a.retired_pending(d, &pending); })) {
        g.retired_pages_pending = pending != 0;
    }
    unsigned corr = 0;
    unsigned unc = 0;
    unsigned rpending = 0;
    unsigned rfailed = 0;
    if (a.remapped != nullptr && r.query("nvmlDeviceGetRemappedRows", [&](auto d) {
            return a.remapped(d, &corr, &unc, &rpending, &rfailed);
        })) {
        g.remap_pending = rpending != 0;
        g.remap_failed = rfailed != 0;
    }
    read_links(a, r, g);
    unsigned t = 0;
    if (r.query("nvmlDeviceGetTemperature",
                [&](auto d) { return a.temperature(d, nvml::kTemperatureGpu, &t); })) {
        g.temperature_c = t;
    }
    if (r.query("nvmlDeviceGetTemperatureThreshold", [&](auto d) {
            return a.temp_threshold(d, nvml::kTemperatureThresholdSlowdown, &t);
        })) {
        g.slowdown_temp_c = t;
    }
    unsigned long long reasons = 0;
    if (r.query("nvmlDeviceGetCurrentClocksEventReasons",
                [&](auto d) { return a.throttle(d, &reasons); })) {
        g.throttle_reasons = reasons;
    }
    return g;
}

[[noreturn]] void child_main(const std::string &library, int fd) {
    const Reporter rep(fd);
    try {
        const Api a = load_api(library);
        rep.call(0, "nvmlInit_v2");
        if (const nvmlReturn_t rc = a.init(); rc != nvml::kSuccess) {
            rep.line(fmt::format("error nvmlInit_v2 failed: {} ({})", a.error_string(rc), rc));
            ::_exit(0);
        }
        NodeSnapshot node;
        rep.call(0, "nvmlDeviceGetCount_v2");
        if (const nvmlReturn_t rc = a.count(&node.count); rc != nvml::kSuccess) {
            rep.line(
                fmt::format("error nvmlDeviceGetCount_v2 failed: {} ({})", a.error_string(rc), rc));
            ::_exit(0);
        }
        for (unsigned i = 0; i < node.count; ++i) {
            node.gpus.push_back(read_gpu(a, rep, i));
        }
        a.shutdown();
        rep.line("snapshot " + nlohmann::json(node).dump());
    } catch (const std::exception &e) {
        rep.line(std::string("error ") + e.what());
    }
    ::_exit(0);
}

std::string last_call(const std::string &buf) {
    // The last complete "call GPU NAME" line.
    std::string last;
    std::size_t pos = 0;
    while (pos < buf.size()) {
        const auto nl = buf.find('\n', pos);
        if (nl == std::string::npos) {
            break;
        }
        const auto line = buf.substr(pos, nl - pos);
        if (line.rfind("call ", 0) == 0) {
            last = line.substr(5);
        }
        pos = nl + 1;
    }
    return last;
}

ProbeResult finish(const std::string &buf) {
    ProbeResult r;
    const std::string text = "\n" + buf;
    if (auto p = text.rfind("\nsnapshot "); p != std::string::npos) {
        const auto end = text.find('\n', p + 1);
        r.snapshot = nlohmann::json::parse(text.substr(p + 10, end - p - 10)).get<NodeSnapshot>();
    } else if (auto q = text.rfind("\nerror "); q != std::string::npos) {
        const auto end = text.find('\n', q + 1);
        r.failure = text.substr(q + 7, end - q - 7);
    }
    return r;
}

} // namespace

ProbeResult probe_gpus(const std::string &library, std::chrono::milliseconds budget) {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) {
        return {std::nullopt, fmt::format("cannot create a pipe: {}", std::strerror(errno))};
    }
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) {
        return {std::nullopt, fmt::format("cannot fork the NVML probe: {}", std::strerror(errno))};
    }
    if (pid == 0) {
        ::close(p[0]);
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) {
            ::_exit(1);
        }
        child_main(library, p[1]);
    }
    ::close(p[1]);
    const auto deadline = Clock::now() + budget;
    std::string buf;
    bool eof = false;
    while (!eof) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        if (left.count() <= 0) {
            break;
        }
        pollfd fd{p[0], POLLIN, 0};
        if (::poll(&fd, 1, static_cast<int>(left.count())) <= 0) {
            continue;
        }
        std::array<char, 65536> chunk{};
        const auto n = ::read(p[0], chunk.data(), chunk.size());
        if (n > 0) {
            buf.append(chunk.data(), static_cast<std::size_t>(n));
        } else if (n == 0 || errno != EINTR) {
            eof = true;
        }
    }
    ::close(p[0]);
    int status = 0;
    if (!eof) {
        ::kill(pid, SIGKILL);
        // A child stuck in the kernel may not die at once; never wait for it long.
        for (int i = 0; i < 20 && ::waitpid(pid, &status, WNOHANG) == 0; ++i) {
            ::usleep(5000);
        }
        const auto call = last_call(buf);
        const double secs = static_cast<double>(budget.count()) / 1000.0;
        if (call.empty()) {
            return {std::nullopt,
                    fmt::format("NVML did not answer within {:.1f} s (hung while loading)", secs)};
        }
        const auto sp = call.find(' ');
        return {std::nullopt,
                fmt::format("NVML call {} on GPU {} did not return within {:.1f} s (hung GPU "
                            "or driver)",
                            call.substr(sp + 1), call.substr(0, sp), secs)};
    }
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    ProbeResult r;
    try {
        r = finish(buf);
    } catch (const std::exception &e) {
        r.failure = fmt::format("the NVML probe sent unreadable data: {}", e.what());
    }
    if (!r.snapshot && r.failure.empty()) {
        const auto call = last_call(buf);
        r.failure = WIFSIGNALED(status)
                        ? fmt::format("the NVML probe crashed with signal {} during {}",
                                      WTERMSIG(status), call.empty() ? "startup" : call)
                        : fmt::format("the NVML probe exited without an answer during {}",
                                      call.empty() ? "startup" : call);
    }
    return r;
}

} // namespace sjh
