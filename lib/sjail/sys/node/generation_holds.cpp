// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/node/generation_holds.hpp"

#include "sjail/core/node/generation_holds.hpp"
#include "sjail/core/node/jail_generation.hpp"
#include "sjail/core/path_rules.hpp"
#include "sjail/sys/child_process.hpp"
#include "sjail/sys/node/jail_probe.hpp"
#include "sjail/sys/safe_open.hpp"
#include "sjail/sys/small_file.hpp"
#include "sjail/sys/state_dir.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <set>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sjail {
namespace {

constexpr std::string_view kRecorded = "sjail-holds ok\n";

std::optional<std::uint64_t> read_generation(const std::string &path) {
    return parse_generation_number(read_small_file(path, 32));
}

// The generations every hold in STATE/held names.
std::set<std::uint64_t> held_now(const std::string &state) {
    std::set<std::uint64_t> held;
    const std::string dir_path = holds_dir(state);
    if (DIR *dir = ::opendir(dir_path.c_str())) {
        while (const dirent *e = ::readdir(dir)) {
            const std::string name = e->d_name;
            const auto generation =
                name.starts_with('.') ? std::nullopt : read_generation(dir_path + "/" + name);
            if (generation) {
                held.insert(*generation);
            }
        }
        ::closedir(dir);
    }
    return held;
}

// A directory below `dir`, opened without following a link; it must be
// root's and closed to group and others. "" or "error: ...".
std::string open_checked_dir(int dir, const char *name, const std::string &shown, Fd &out) {
    out = open_below(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, Resolve::Beneath);
    struct stat st {};
    if (!out.valid() || ::fstat(out.get(), &st) != 0) {
        return "error: " + Status::from_errno("open " + shown).message();
    }
    if (auto s = check_root_owned(shown, st.st_uid, st.st_mode); !s.ok()) {
        return "error: " + s.message();
    }
    return {};
}

// In the child: `text` written as NODE in the volume's nodes directory.
std::string write_record(const std::string &volume, const std::string &node,
                         const std::string &text, bool holds_any) {
    const Fd vol = open_below(AT_FDCWD, volume.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW,
                              Resolve::NoSymlinks);
    if (!vol.valid()) {
        return "error: " + Status::from_errno("open " + volume).message();
    }
    const std::string state_shown = volume + "/" + std::string(kJailStateDir);
    if (!holds_any && ::faccessat(vol.get(), std::string(kJailStateDir).c_str(), F_OK,
                                  AT_SYMLINK_NOFOLLOW) != 0) {
        return std::string(kRecorded); // the volume has no generations now
    }
    Fd state;
    Fd nodes;
    const std::string nodes_shown = volume + "/" + std::string(kNodesDir);
    const std::string nodes_name = nodes_shown.substr(state_shown.size() + 1);
    if (auto e =
            open_checked_dir(vol.get(), std::string(kJailStateDir).c_str(), state_shown, state);
        !e.empty()) {
        return e;
    }
    if (::mkdirat(state.get(), nodes_name.c_str(), 0700) != 0 && errno != EEXIST) {
        return "error: " + Status::from_errno("mkdir " + nodes_shown).message();
    }
    if (auto e = open_checked_dir(state.get(), nodes_name.c_str(), nodes_shown, nodes);
        !e.empty()) {
        return e;
    }
    const std::string fresh = "." + node + ".new";
    (void)::unlinkat(nodes.get(), fresh.c_str(), 0);
    const int fd = ::openat(nodes.get(), fresh.c_str(),
                            O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        return "error: " + Status::from_errno("create " + nodes_shown + "/" + fresh).message();
    }
    const Fd file(fd);
    write_all(file.get(), text);
    if (::fsync(file.get()) != 0 ||
        ::renameat(nodes.get(), fresh.c_str(), nodes.get(), node.c_str()) != 0) {
        return "error: " + Status::from_errno("write " + nodes_shown + "/" + node).message();
    }
    return std::string(kRecorded);
}

std::string host_name() {
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) != 0) {
        return {};
    }
    return name;
}

} // namespace

Status save_hold(const std::string &path, std::uint64_t generation) {
    if (generation == 0) {
        if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
            return Status::from_errno("remove " + path);
        }
        return {};
    }
    if (auto s = ensure_root_dir(parent_dir(path), 0700); !s.ok()) {
        return Status::failure("state directory: " + s.message());
    }
    return write_file_atomically(path, std::to_string(generation));
}

Status record_generation_holds(const Config &config) {
    Config on_volume = config;
    on_volume.jail = config.jail_volume.empty() ? config.jail : config.jail_volume;
    const std::string &state = config.state_dir;
    const std::string lock_path = state + "/holds.lock";
    const Fd lock = open_regular(lock_path, O_CREAT | O_RDWR);
    if (!lock.valid() || ::flock(lock.get(), LOCK_EX) != 0) {
        return Status::from_errno("lock " + lock_path);
    }
    const std::set<std::uint64_t> held = held_now(state);
    const std::string node = host_name();
    const std::string memo_path = state + "/holds";
    const std::string last = read_small_file(memo_path);
    const std::string text = format_node_holds(held);
    const std::string memo = on_volume.jail + "\n" + node + "\n" + text;
    if (memo == last || (held.empty() && last.empty())) {
        return {};
    }
    const std::string record = on_volume.jail + "/" + std::string(kNodesDir) + "/" + node;
    if (!valid_node_record_name(node)) {
        return Status::failure("this node's host name '" + node +
                               "' cannot name its record of the jail generations it holds "
                               "(letters, digits, '-', '_' and '.' only)");
    }
    std::string report;
    bool in_time = false;
    if (auto s = ask_in_child(
            on_volume, "the record of the jail generations this node holds",
            [&] { return write_record(on_volume.jail, node, text, !held.empty()); }, report,
            in_time);
        !s.ok()) {
        return s;
    }
    if (!in_time) {
        return filesystem_silent(on_volume);
    }
    if (report != kRecorded) {
        const std::string why = report.starts_with("error: ") ? report.substr(7) : report;
        return Status::failure("recording the jail generations this node holds in " + record +
                               ": " + (why.empty() ? "the writer ended without an answer" : why));
    }
    return write_file_atomically(memo_path, memo);
}

} // namespace sjail
