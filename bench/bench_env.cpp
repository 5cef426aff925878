// SPDX-License-Identifier: Apache-2.0
// The benchmark node process and its driver: the node is forked, sets itself
// up (bench_node.hpp), then answers requests with samples (samples.hpp) over
// a socket pair.
#include "bench_env.hpp"

#include "bench_node.hpp"
#include "kit/files.hpp"
#include "samples.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace bench {
namespace {

struct Request {
    std::uint32_t op = 0;
    std::uint32_t binds = 0;
    std::uint32_t count = 0;
};

bool send_reply(int sock, const std::string &error, const std::vector<std::int64_t> &values) {
    const std::array<std::uint32_t, 2> head = {static_cast<std::uint32_t>(error.size()),
                                               static_cast<std::uint32_t>(values.size())};
    return kit::write_all(sock, head.data(), sizeof(head)) &&
           kit::write_all(sock, error.data(), error.size()) &&
           kit::write_all(sock, values.data(), values.size() * sizeof(std::int64_t));
}

bool read_reply(int sock, std::string &error, std::vector<std::int64_t> &values) {
    std::array<std::uint32_t, 2> head{};
    if (!kit::read_all(sock, head.data(), sizeof(head))) {
        return false;
    }
    error.assign(head[0], '\0');
    const std::size_t old = values.size();
    values.resize(old + head[1]);
    return kit::read_all(sock, error.data(), error.size()) &&
           kit::read_all(sock, values.data() + old, head[1] * sizeof(std::int64_t));
}

[[noreturn]] void serve(int sock, int host_mounts, const std::vector<int> &binds) {
    std::vector<JailConfig> configs;
    int actual = 0;
    std::string no_watch;
    std::string error = setup_node(host_mounts, binds, configs, actual, no_watch);
    if (error.empty() && !no_watch.empty()) {
        error = "-" + no_watch; // not an error: said after a '-'
    }
    if (!send_reply(sock, error, {actual}) || (!error.empty() && !error.starts_with('-'))) {
        ::_exit(1);
    }
    Request req;
    while (kit::read_all(sock, &req, sizeof(req))) {
        std::vector<std::int64_t> values;
        error.clear();
        const auto jc = std::find_if(configs.begin(), configs.end(), [&req](const JailConfig &c) {
            return c.binds == static_cast<int>(req.binds);
        });
        if (jc == configs.end()) {
            error = "no config with " + std::to_string(req.binds) + " binds";
        }
        const bool job_batch = error.empty() && static_cast<Op>(req.op) == Op::JobEntry;
        if (job_batch) {
            error = job_entry_batch(*jc, true);
        }
        for (std::uint32_t i = 0; error.empty() && i < req.count; ++i) {
            error = take_sample(static_cast<Op>(req.op), *jc, values);
        }
        if (job_batch) {
            const std::string deleted = job_entry_batch(*jc, false);
            error = error.empty() ? deleted : error;
        }
        if (!send_reply(sock, error, values)) {
            break;
        }
    }
    // The jobs' inits live outside this process: end them. Exiting then drops
    // this namespace, and with it every mount and nsfs bind made here.
    for (const auto &jc : configs) {
        (void)job_entry_batch(jc, false);
    }
    ::_exit(0);
}

} // namespace

std::unique_ptr<Env> Env::start(int host_mounts, const std::vector<int> &binds,
                                std::string &error) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        error = kit::errno_text("socketpair");
        return nullptr;
    }
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid == 0) {
        // Keep only our end of the socket: a node holding the driver's end of
        // another node's socket would keep that node from seeing EOF.
        if (::dup2(sv[1], 3) != 3 || ::close_range(4, ~0U, 0) != 0) {
            ::_exit(1);
        }
        (void)::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) {
            ::_exit(1);
        }
        serve(3, host_mounts, binds);
    }
    ::close(sv[1]);
    if (pid < 0) {
        ::close(sv[0]);
        error = kit::errno_text("fork");
        return nullptr;
    }
    std::unique_ptr<Env> env(new Env(pid, sv[0]));
    std::vector<std::int64_t> ready;
    if (!read_reply(env->sock_, error, ready) || ready.size() != 1) {
        if (error.empty()) {
            error = "the benchmark node process died while setting up";
        }
        return nullptr;
    }
    if (error.starts_with('-')) {
        env->no_watch_ = error.substr(1);
        error.clear();
    }
    if (!error.empty()) {
        return nullptr;
    }
    env->actual_mounts_ = static_cast<int>(ready[0]);
    return env;
}

Env::~Env() {
    ::close(sock_);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
}

std::string Env::run(Op op, int binds, std::uint32_t count, std::vector<std::int64_t> &values) {
    const Request req{static_cast<std::uint32_t>(op), static_cast<std::uint32_t>(binds), count};
    if (!kit::write_all(sock_, &req, sizeof(req))) {
        return "the benchmark node process is gone";
    }
    std::string error;
    if (!read_reply(sock_, error, values)) {
        return "the benchmark node process died";
    }
    return error;
}

} // namespace bench
