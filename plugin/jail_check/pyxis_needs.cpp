// SPDX-License-Identifier: Apache-2.0
#include "pyxis_needs.hpp"
#include "slurm_conf.hpp"

#include "sjail/core/path_rules.hpp"
#include "sjail/core/trust_rules.hpp"

#include <algorithm>
#include <array>
#include <iterator>
#include <sys/stat.h>

namespace sjail::check {
namespace {

// The safe arrangement, as a fix: the two plugstack.conf lines.
std::string runtime_path_fix(const Config &config) {
    return "bind a node-local directory, root's and closed to group and others, at the same path "
           "and point pyxis at it: 'required chroot.so jail=" +
           config.jail +
           " ... bind=/var/lib/pyxis' and 'required spank_pyxis.so "
           "runtime_path=/var/lib/pyxis' (mkdir -m 0755 /var/lib/pyxis on every node and in the "
           "jail; see docs/pyxis.md)";
}

std::optional<Finding> load_order_finding(const std::vector<PluginLine> &plugins,
                                          const PluginLine &pyxis) {
    const auto chroot = std::find_if(plugins.begin(), plugins.end(), loads_chroot);
    const auto at = std::find(plugins.begin(), plugins.end(), pyxis);
    if (chroot == plugins.end() || at == plugins.end() || at > chroot) {
        return std::nullopt;
    }
    return Finding{Severity::Problem,
                   pyxis.origin + ": " + pyxis.plugin + " is loaded before chroot.so (" +
                       chroot->origin +
                       "): its callbacks run first, as root on the node's own root instead of "
                       "in the job's view of the jail (its mkdir and chown of runtime_path/UID, "
                       "the enroot it starts)",
                   "put chroot.so's line before pyxis's (with include files, name chroot.so's "
                   "file so that it sorts first, e.g. plugstack.conf.d/50-chroot.conf)"};
}

std::optional<Finding> container_scope_finding(const PluginLine &pyxis) {
    if (pyxis_setting(pyxis, "container_scope") != "job") {
        return std::nullopt;
    }
    return Finding{Severity::Problem,
                   pyxis.origin +
                       ": container_scope=job: pyxis's SPANK job epilog runs enroot on the "
                       "node's own root, where there is no enroot (only the jail has it), so "
                       "every job's epilog fails; not supported",
                   "remove container_scope=job (the default, container_scope=global, is the "
                   "supported one: enroot's containers live in the job's /tmp and go with the "
                   "job)"};
}

std::optional<Finding> runtime_path_finding(const PluginLine &pyxis, const Config &config) {
    const auto set = pyxis_setting(pyxis, "runtime_path");
    const std::string path = pyxis_runtime_path(pyxis);
    const auto bind = bind_at(config, path);
    if (bind && bind->read_only) {
        return Finding{Severity::Problem,
                       pyxis.origin + ": runtime_path=" + path +
                           " is bound read-only by chroot.so (bind=" + bind->source + ":" + path +
                           ":ro): pyxis cannot make " + path +
                           "/UID there, so every pyxis step fails",
                       "drop :ro from that bind= of chroot.so"};
    }
    if (bind) {
        return std::nullopt;
    }
    if (!set && config.run == RunMode::Node) {
        return Finding{Severity::Problem,
                       pyxis.origin + ": " + pyxis.plugin +
                           " has no runtime_path=, and its default " + path +
                           " is no bind= target of chroot.so: it does not exist in the job's view "
                           "of the jail (chroot.so's /run), so every pyxis step fails (\"pyxis: "
                           "couldn't mkdir " +
                           path + "/UID\")",
                       runtime_path_fix(config)};
    }
    return Finding{Severity::Problem,
                   pyxis.origin + ": runtime_path=" + path +
                       " is no bind= target of chroot.so, so it lies on the shared jail or in "
                       "the job's /tmp: pyxis, as root in the job's view, makes " +
                       path +
                       "/UID and chowns it following symlinks, and a user who can write "
                       "anywhere along that path gets root over the jail",
                   runtime_path_fix(config)};
}

std::string way_fix(const NodeDirEntry &entry) {
    if (entry.symlink || !entry.directory) {
        return "replace " + entry.path +
               " with a real directory, root's and closed to group and others (mkdir -m 0755), "
               "or give chroot.so's bind= the real path";
    }
    return "chown root:root " + entry.path + "; chmod go-w " + entry.path;
}

// What is wrong with one directory on the way, or "" when nothing is: the
// plugin's own trust rule (trust_rules.hpp), and no symlink at all.
std::string entry_fault(const NodeDirEntry &entry) {
    if (entry.symlink) {
        return "is a symlink";
    }
    const PathFacts facts{entry.uid, (entry.directory ? S_IFDIR : S_IFREG) | entry.mode, false};
    return untrusted_because(facts, kRootOnly, PathRole::directory_on_the_way);
}

// Removes one pair of quotes around `value`, as the shell's eval would.
std::string_view unquoted(std::string_view value) {
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
        value.back() == value.front()) {
        return value.substr(1, value.size() - 2);
    }
    return value;
}

// The line without a comment that starts a word (" #..."), as the shell reads it.
std::string_view without_comment(std::string_view line) {
    for (std::size_t i = 1; i < line.size(); ++i) {
        if (line[i] == '#' && (line[i - 1] == ' ' || line[i - 1] == '\t')) {
            return line.substr(0, i);
        }
    }
    return line;
}

struct EnrootPathSetting {
    const char *key;
    const char *default_place; // where enroot puts it when unset
};

constexpr std::array kEnrootPaths{
    EnrootPathSetting{"ENROOT_RUNTIME_PATH",
                      "${XDG_RUNTIME_DIR}/enroot, /run/enroot under pyxis, not the user's"},
    EnrootPathSetting{"ENROOT_CACHE_PATH", "~/.cache/enroot, in the home"},
    EnrootPathSetting{"ENROOT_DATA_PATH", "~/.local/share/enroot, in the home"},
};

// "ENROOT_DATA_PATH unset (enroot's default: ...)" for each path setting
// of `settings` that is not below /tmp.
std::vector<std::string>
enroot_paths_outside_tmp(const std::map<std::string, std::string> &settings) {
    std::vector<std::string> out;
    for (const auto &setting : kEnrootPaths) {
        const auto it = settings.find(setting.key);
        if (it == settings.end() || it->second.empty()) {
            out.push_back(std::string(setting.key) +
                          " unset (enroot's default: " + setting.default_place + ")");
        } else if (!below_job_tmp(it->second)) {
            out.push_back(std::string(setting.key) + " " + it->second);
        }
    }
    return out;
}

std::optional<Finding> enroot_conf_finding(const std::string &jail, const EnrootFacts &facts) {
    const std::string conf = jail + std::string(kEnrootConf);
    const auto outside = enroot_paths_outside_tmp(parse_enroot_conf(facts.conf.value_or("")));
    if (outside.empty()) {
        return std::nullopt;
    }
    std::string listed;
    for (const auto &item : outside) {
        listed += (listed.empty() ? "" : "; ") + item;
    }
    return Finding{Severity::Warning,
                   (facts.conf
                        ? conf + " puts enroot's files"
                        : "the jail has no root-owned " + conf + ", so enroot puts its files") +
                       " outside the job's /tmp (" + listed +
                       "): unpacked images (tens of thousands of files) land on the shared "
                       "jail, meet other nodes' and outlive the job, or enroot fails",
                   "install images/jail/enroot/enroot.conf as " + conf +
                       " (mode 0644): ENROOT_RUNTIME_PATH, ENROOT_CACHE_PATH and "
                       "ENROOT_DATA_PATH below /tmp/enroot-${UID}, the job's own /tmp"};
}

} // namespace

bool loads_pyxis(const PluginLine &line) {
    const std::string name = base_name(line.plugin);
    return name == "spank_pyxis.so" || name == "pyxis.so";
}

std::vector<PluginLine> pyxis_lines(const std::vector<PluginLine> &plugins) {
    std::vector<PluginLine> out;
    std::copy_if(plugins.begin(), plugins.end(), std::back_inserter(out), loads_pyxis);
    return out;
}

std::optional<std::string> pyxis_setting(const PluginLine &line, std::string_view key) {
    std::optional<std::string> value;
    for (const auto &arg : line.args) {
        const std::string_view word = arg;
        if (word.size() > key.size() && word.starts_with(key) && word[key.size()] == '=') {
            value = std::string(word.substr(key.size() + 1));
        }
    }
    return value;
}

std::string pyxis_runtime_path(const PluginLine &line) {
    return pyxis_setting(line, "runtime_path").value_or(std::string(kPyxisDefaultRuntimePath));
}

std::optional<BindSpec> bind_at(const Config &config, const std::string &target) {
    const auto it = std::find_if(config.binds.begin(), config.binds.end(),
                                 [&](const BindSpec &bind) { return bind.target == target; });
    if (it == config.binds.end()) {
        return std::nullopt;
    }
    return *it;
}

std::vector<Finding> pyxis_line_findings(const std::vector<PluginLine> &plugins,
                                         const Config &config) {
    std::vector<Finding> out;
    for (const auto &pyxis : pyxis_lines(plugins)) {
        for (auto finding : {load_order_finding(plugins, pyxis), container_scope_finding(pyxis),
                             runtime_path_finding(pyxis, config)}) {
            if (finding) {
                out.push_back(std::move(*finding));
            }
        }
    }
    return out;
}

std::vector<std::string> path_and_parents(const std::string &path) {
    std::vector<std::string> out{"/"};
    std::string so_far;
    for (const auto &component : split_components(path)) {
        so_far += "/" + component;
        out.push_back(so_far);
    }
    return out;
}

std::optional<Finding> runtime_dir_finding(const std::string &runtime_path,
                                           const std::vector<NodeDirEntry> &way) {
    for (const auto &entry : way) {
        if (!entry.exists) {
            return std::nullopt;
        }
        const std::string fault = entry_fault(entry);
        if (fault.empty()) {
            continue;
        }
        const std::string &node_dir = way.back().path;
        const std::string where = entry.path == node_dir
                                      ? "the node directory chroot.so binds there"
                                      : "above " + node_dir + ", which chroot.so binds there";
        return Finding{Severity::Problem,
                       "pyxis's runtime_path=" + runtime_path + ": on this node " + entry.path +
                           " " + fault + " (" + where +
                           "): pyxis, as root, makes runtime_path/UID there and chowns what it "
                           "finds, so every directory on the way must be a real one, root's and "
                           "closed to group and others",
                       way_fix(entry)};
    }
    return std::nullopt;
}

std::map<std::string, std::string> parse_enroot_conf(std::string_view text) {
    std::map<std::string, std::string> out;
    while (!text.empty()) {
        const auto end = text.find('\n');
        const std::string_view line = trim(without_comment(trim(text.substr(0, end))));
        text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
        if (line.empty() || line.front() == '#') {
            continue;
        }
        const auto blank = line.find_first_of(" \t");
        const std::string_view key = line.substr(0, blank);
        const std::string_view value =
            blank == std::string_view::npos ? std::string_view{} : trim(line.substr(blank));
        out.emplace(std::string(key), std::string(unquoted(value))); // the first one wins
    }
    return out;
}

bool below_job_tmp(std::string_view path) {
    if (!is_same_or_below(path, "/tmp")) {
        return false;
    }
    for (const auto part : split(path, '/')) {
        if (part == "..") {
            return false;
        }
    }
    return true;
}

std::vector<Finding> enroot_findings(const std::string &jail, const EnrootFacts &facts) {
    std::vector<Finding> out;
    if (auto finding = enroot_conf_finding(jail, facts)) {
        out.push_back(std::move(*finding));
    }
    const std::string hooks = jail + "/etc/enroot/hooks.d/";
    if (facts.stock_gpu_hook) {
        const std::string stock = jail + std::string(kEnrootStockGpuHook);
        out.push_back({Severity::Warning,
                       stock + " is enroot's own GPU hook: it runs nvidia-container-cli, which "
                               "the jail does not have, so every container started with GPUs "
                               "(NVIDIA_VISIBLE_DEVICES) fails; the jail's "
                               "50-slurm-jail-nvidia.sh replaces it (and refuses to run beside "
                               "it)",
                       "rm " + stock +
                           " (where enroot came from a package, divert it in the jail: "
                           "dpkg-divert --local --rename --divert "
                           "/etc/enroot/hooks.d/98-nvidia.sh.disabled --add "
                           "/etc/enroot/hooks.d/98-nvidia.sh)"});
    }
    if (!facts.jail_gpu_hook && facts.node_gpu_driver) {
        out.push_back(
            {Severity::Warning,
             "this node has an NVIDIA driver, but the jail has no executable " + jail +
                 std::string(kEnrootJailGpuHook) +
                 ": containers that enroot (pyxis) starts get neither the driver nor "
                 "the GPUs",
             "install -m 0755 images/jail/enroot/hooks.d/50-slurm-jail-nvidia.sh " + hooks});
    }
    return out;
}

} // namespace sjail::check
