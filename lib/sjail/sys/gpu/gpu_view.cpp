// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/gpu/gpu_view.hpp"

#include "sjail/core/run_view.hpp"
#include "sjail/sys/gpu/ld_cache.hpp"
#include "sjail/sys/gpu/nvidia_driver_mount.hpp"
#include "sjail/sys/run_view.hpp"
#include "sjail/sys/safe_open.hpp"
#include "sjail/sys/small_file.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fcntl.h>
#include <sys/mount.h>

namespace sjail {
namespace {

constexpr const char *kJailCache = "/etc/ld.so.cache";

// Discovery lists what it looked at on lines of their own; steps report one
// line: "in:\n  /a: x\n  /b: y" becomes "in: /a: x; /b: y".
std::string one_line(const std::string &text) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '\n') {
            out += text[i];
            continue;
        }
        out += out.ends_with(':') ? " " : "; ";
        while (i + 1 < text.size() && text[i + 1] == ' ') {
            ++i;
        }
    }
    return out;
}

std::string cache_path(const Config &config) {
    return config.state_dir + "/ld.so.cache";
}

// The loader must find these two in the driver tree, never a copy in the jail.
std::vector<std::string> names_that_must_win(const NodeDriver &driver) {
    std::vector<std::string> names;
    for (const auto &file : driver.files) {
        for (const char *name : {"libcuda.so.1", "libnvidia-ml.so.1"}) {
            if (std::find(file.links.begin(), file.links.end(), name) != file.links.end()) {
                names.emplace_back(name);
            }
        }
    }
    return names;
}

LoaderCacheRequest loader_request(const Config &config, const DriverPlan &plan,
                                  const NodeDriver &driver) {
    LoaderCacheRequest request;
    request.view_root = config.jail;
    request.first_dirs = plan.library_dirs;
    request.expect_first = names_that_must_win(driver);
    request.output = cache_path(config);
    request.time_limit_ms = config.build_timeout_s * 1000;
    return request;
}

// Binds the node-local cache read-only over the view's /etc/ld.so.cache.
Status bind_loader_cache(int view, const std::string &cache) {
    Fd source;
    if (auto s = open_node_path(cache, source); !s.ok()) {
        return s;
    }
    Fd tree(::open_tree(source.get(), "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH));
    mount_attr attr{};
    attr.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
    if (!tree.valid() || ::mount_setattr(tree.get(), "", AT_EMPTY_PATH, &attr, sizeof(attr)) != 0) {
        return Status::from_errno("preparing the bind of " + cache);
    }
    Fd target;
    if (auto s = open_mount_target(view, kJailCache, TargetType::File, target); !s.ok()) {
        return Status::failure(s.message() + " (the jail's own loader cache, made by ldconfig in "
                                             "the jail image)");
    }
    if (::move_mount(tree.get(), "", target.get(), "",
                     MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0) {
        return Status::from_errno("binding " + cache + " on " + kJailCache + " in the jail");
    }
    return {};
}

std::string file_line(const DriverFile &file, const DriverBind &bind) {
    std::string line = bind.target + " <- " + file.node_path;
    if (!file.links.empty()) {
        line += " (links:";
        for (const auto &link : file.links) {
            line += " " + link;
        }
        line += ")";
    }
    return line + "\n";
}

std::string report(const Config &config, const NodeDriver &driver, const DriverPlan &plan,
                   const std::vector<std::string> &notes, const std::vector<std::size_t> &skipped,
                   double cache_ms) {
    std::string text = "gpu=" + std::string(gpu_mode_name(config.gpu)) + ": NVIDIA driver " +
                       driver.version + " found under " + driver.root + ", bound at " + plan.tree +
                       "\n";
    for (std::size_t i = 0; i < plan.binds.size(); ++i) {
        if (std::find(skipped.begin(), skipped.end(), i) == skipped.end()) {
            text += file_line(driver.files.at(plan.binds[i].file), plan.binds[i]);
        }
    }
    char ms[32];
    (void)std::snprintf(ms, sizeof(ms), "%.1f", cache_ms);
    text += std::string(kJailCache) + " <- " + cache_path(config) + " (ldconfig over the view, " +
            ms + " ms)\n";
    for (const auto &note : notes) {
        text += "note: " + note + "\n";
    }
    return text;
}

// run=node: the daemons' socket directories below /run get their mount
// points in the node's own /run.
Status make_run_mount_points(const Config &config, int view, const DriverPlan &plan,
                             const NodeDriver &driver) {
    for (const auto &bind : plan.binds) {
        if (bind.in_tree || !in_node_run(config.run, bind.target)) {
            continue;
        }
        const auto type = driver.files.at(bind.file).kind == DriverFileKind::IpcDir
                              ? TargetType::Directory
                              : TargetType::File;
        if (auto s = make_node_run_mount_point(view, bind.target, type); !s.ok()) {
            return s;
        }
    }
    return {};
}

Status with_context(const Status &s) {
    return Status::failure("binding the node's NVIDIA driver into the jail: " + s.message() +
                           " (to run jobs without it, set gpu=off)");
}

} // namespace

DriverSearch driver_search_for(const Config &config) {
    DriverSearch search;
    search.mode = config.gpu;
    if (!config.gpu_driver_root.empty()) {
        search.roots = {config.gpu_driver_root};
    }
    search.mps_pipe_dir = config.gpu_mps_dir;
    if (config.gpu != GpuMode::Off) { // gpu=off looks for nothing
        search.memo = read_small_file(driver_memo_path(config.state_dir));
    }
    return search;
}

std::string driver_memo_path(const std::string &state_dir) {
    return state_dir + "/driver-memo";
}

Status find_node_gpu(const Config &config, NodeGpu &out,
                     const std::function<Status(std::string &)> &jail_loader_line) {
    out = NodeGpu{};
    const std::string mode(gpu_mode_name(config.gpu));
    if (auto s = discover_node_driver(driver_search_for(config), out.driver); !s.ok()) {
        return Status::failure(one_line(s.message()));
    }
    if (!out.driver.found()) {
        out.stamp = "gpu " + mode + " none\n" + out.driver.memo;
        return {};
    }
    std::string jail_cache;
    if (auto s = jail_loader_line ? jail_loader_line(jail_cache)
                                  : jail_loader_stamp(config.jail, jail_cache);
        !s.ok()) {
        return s;
    }
    out.stamp = "gpu " + mode + " " + out.driver.root + "\n" +
                driver_stamp(out.driver.version, out.driver.files) + jail_cache + out.driver.memo;
    return {};
}

Status mount_node_gpu(const Config &config, int view, const NodeDriver &driver) {
    const std::string report_path = config.state_dir + "/gpu";
    if (!driver.found()) {
        return write_file_atomically(report_path, "gpu=" + std::string(gpu_mode_name(config.gpu)) +
                                                      ": no NVIDIA driver bound\n");
    }
    DriverPlan plan;
    if (auto s = plan_driver_view(driver.files, DriverView{}, plan); !s.ok()) {
        return with_context(s);
    }
    if (auto s = make_run_mount_points(config, view, plan, driver); !s.ok()) {
        return with_context(s);
    }
    std::vector<std::string> notes = driver.notes;
    std::vector<std::size_t> skipped;
    if (auto s = mount_driver_view(view, plan, driver, notes, skipped); !s.ok()) {
        return with_context(s);
    }
    const auto started = std::chrono::steady_clock::now();
    if (auto s = build_loader_cache(loader_request(config, plan, driver)); !s.ok()) {
        return with_context(s);
    }
    const std::chrono::duration<double, std::milli> took =
        std::chrono::steady_clock::now() - started;
    if (auto s = bind_loader_cache(view, cache_path(config)); !s.ok()) {
        return with_context(s);
    }
    return write_file_atomically(report_path,
                                 report(config, driver, plan, notes, skipped, took.count()));
}

} // namespace sjail
