// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/gpu/nvidia_driver.hpp"

#include "sjail/core/gpu/driver_memo.hpp"
#include "sjail/core/gpu/ld_cache.hpp"
#include "sjail/core/gpu/ld_cache_arch.hpp"
#include "sjail/core/path_rules.hpp"
#include "sjail/sys/safe_open.hpp"
#include "sjail/sys/small_file.hpp"
#include "sjail/sys/trusted_path.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <map>
#include <sys/stat.h>
#include <unistd.h>

namespace sjail {
namespace {

// `path` (absolute) as seen from the root `root` on the node.
std::string under(const std::string &root, std::string_view path) {
    return root == "/" ? std::string(path) : root + std::string(path);
}

// How a driver root is laid out.
struct Layout {
    bool from_cache = false;           // read etc/ld.so.cache
    std::vector<std::string> lib_dirs; // otherwise list these
    std::string bin_dir;               // where the binaries are
    std::string share_dir;             // what stands for /usr/share
};

// One driver root being searched.
struct Root {
    std::string path;  // on the node
    std::string shown; // prefix for messages ("" for "/")
    Fd fd;
    Layout layout;
    std::map<std::string, TrustedOpen> dirs;  // library directories opened so far
    std::map<std::string, TrustedOpen> files; // "DIR/REAL" -> the real file
    TrustedOpen cache;                        // etc/ld.so.cache, opened for reading
    Status cache_status;                      // why it could not be opened
};

Status refuse(const Root &root, const std::string &why) {
    return Status::failure("refusing the NVIDIA driver under " + root.path + ": " + why);
}

// Opens a library directory of `root` once. `dir` null: missing.
Status lib_dir(Root &root, const std::string &path, const TrustedOpen *&dir) {
    dir = nullptr;
    auto it = root.dirs.find(path);
    if (it == root.dirs.end()) {
        TrustedOpen opened;
        if (auto s = open_trusted(root.fd.get(), root.shown, path, TrustedKind::Directory, opened);
            !s.ok()) {
            if (opened.missing) {
                return {};
            }
            return refuse(root, s.message());
        }
        it = root.dirs.emplace(path, std::move(opened)).first;
    }
    dir = &it->second;
    return {};
}

// Follows each candidate's soname links within its directory.
Status resolve(Root &root, const std::vector<LibraryName> &candidates,
               std::vector<LibraryName> &resolved, std::vector<std::string> &notes) {
    for (const auto &c : candidates) {
        const TrustedOpen *dir = nullptr;
        if (auto s = lib_dir(root, c.dir, dir); !s.ok()) {
            return s;
        }
        if (dir == nullptr) {
            notes.push_back(under(root.path, c.dir) + " (listed for " + c.name + ") is missing");
            continue;
        }
        std::string real;
        TrustedOpen file;
        if (auto s = open_in_dir(dir->fd.get(), dir->shown, c.name, real, file); !s.ok()) {
            if (file.missing) {
                notes.push_back(s.message() + " (a stale loader cache entry)");
                continue;
            }
            return refuse(root, s.message());
        }
        resolved.push_back({c.dir, c.name, real});
        root.files.try_emplace(c.dir + "/" + real, std::move(file));
    }
    return {};
}

// The first bytes of the library `real` in `dir`, whose O_PATH open is
// `file`: opened again for reading as trusted_path reopens a file (one
// component below the directory, no link followed) and insisting on the
// same inode.
Status read_library_header(const TrustedOpen &dir, const std::string &real, const TrustedOpen &file,
                           std::string &header) {
    const Fd fd = open_below(dir.fd.get(), real.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW,
                             Resolve::Beneath);
    struct stat st {};
    if (!fd.valid() || ::fstat(fd.get(), &st) != 0) {
        return Status::from_errno("open " + file.shown);
    }
    if (st.st_dev != file.st.st_dev || st.st_ino != file.st.st_ino) {
        return Status::failure(file.shown + " changed while it was being opened; try again");
    }
    char bytes[64];
    ssize_t n = 0;
    do {
        n = ::pread(fd.get(), bytes, sizeof(bytes), 0);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
        return Status::from_errno("read " + file.shown);
    }
    header.assign(bytes, static_cast<std::size_t>(n));
    return {};
}

// A root without a loader cache: keeps the resolved names whose files are
// built for the node's architecture, as their ELF headers say (the loader
// cache says it for a root that has one).
Status keep_own_arch(Root &root, std::vector<LibraryName> &resolved,
                     std::vector<std::string> &notes) {
    std::map<std::string, std::string> by_file; // "DIR/REAL" -> library_arch_mismatch
    std::vector<std::string> mismatch;
    mismatch.reserve(resolved.size());
    for (const auto &n : resolved) {
        const std::string key = n.dir + "/" + n.real;
        auto it = by_file.find(key);
        if (it == by_file.end()) {
            const TrustedOpen *dir = nullptr;
            if (auto s = lib_dir(root, n.dir, dir); !s.ok() || dir == nullptr) {
                return s.ok() ? refuse(root, n.dir + " vanished") : s;
            }
            auto file = root.files.find(key);
            if (file == root.files.end()) {
                return Status::failure("internal: " + key + " was resolved but not opened");
            }
            std::string header;
            if (auto s = read_library_header(*dir, n.real, file->second, header); !s.ok()) {
                return refuse(root, s.message());
            }
            it = by_file.emplace(key, library_arch_mismatch(header, kBuildArch)).first;
        }
        mismatch.push_back(it->second);
    }
    std::vector<LibraryName> kept;
    std::vector<std::string> ignored;
    if (auto s = keep_own_arch_libraries(resolved, mismatch, kBuildArch, root.shown, kept, ignored);
        !s.ok()) {
        return s;
    }
    for (auto &i : ignored) {
        notes.push_back("ignored " + std::move(i));
    }
    resolved = std::move(kept);
    return {};
}

// Reads the whole cache for the driver's names.
Status read_cache_candidates(const TrustedOpen &cache, std::vector<LibraryName> &candidates) {
    std::string bytes;
    if (auto s = read_whole_file(cache.fd.get(), cache.shown, bytes); !s.ok()) {
        return s;
    }
    // Most nodes have no driver, and every step asks: a well-formed cache in
    // which neither name the version is read from occurs lists no driver,
    // without parsing its every entry.
    if (bytes.starts_with("glibc-ld.so.cache1.1") &&
        bytes.find("libcuda.so.1") == std::string::npos &&
        bytes.find("libnvidia-ml.so.1") == std::string::npos) {
        candidates.clear();
        return {};
    }
    LdCache parsed;
    if (auto s = parse_ld_cache(bytes, parsed); !s.ok()) {
        return Status::failure("the loader cache " + cache.shown +
                               " cannot be read: " + s.message());
    }
    if (auto s = check_ld_cache_arch(parsed, kBuildArch, cache.shown); !s.ok()) {
        const std::string arch(kBuildArch.name);
        return Status::failure(s.message() + "; install the NVIDIA driver built for " + arch +
                               " (from a driver container: its " + arch +
                               " image), or point gpu_driver_root= at the root that holds it");
    }
    candidates = driver_library_candidates(parsed, kBuildArch);
    return {};
}

// The driver's names in `root`'s loader cache: from `memo` while the cache
// is the file the memo was made from, else read; `memo_out` is the memo of
// what was used.
Status cache_candidates(Root &root, const std::string &memo, std::vector<LibraryName> &candidates,
                        std::string &memo_out) {
    if (!root.cache_status.ok()) {
        return refuse(root, root.cache_status.message());
    }
    const TrustedOpen &cache = root.cache;
    std::string key = identity_stamp_line("ld.so.cache " + cache.shown, file_identity(cache.st));
    key.pop_back(); // its newline
    if (driver_memo_lookup(memo, key, candidates)) {
        memo_out = memo;
        return {};
    }
    if (auto s = read_cache_candidates(cache, candidates); !s.ok()) {
        return s;
    }
    memo_out = driver_memo_text(key, candidates);
    return {};
}

Status listed_candidates(Root &root, std::vector<LibraryName> &candidates) {
    for (const auto &path : root.layout.lib_dirs) {
        const TrustedOpen *dir = nullptr;
        if (auto s = lib_dir(root, path, dir); !s.ok()) {
            return s;
        }
        if (dir == nullptr) {
            continue;
        }
        const int fd = ::openat(dir->fd.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *listing = fd < 0 ? nullptr : ::fdopendir(fd);
        if (listing == nullptr) {
            if (fd >= 0) {
                ::close(fd);
            }
            return Status::from_errno("list " + dir->shown);
        }
        std::vector<std::string> names;
        while (const dirent *e = ::readdir(listing)) {
            if (is_driver_library_name(e->d_name)) {
                names.emplace_back(e->d_name);
            }
        }
        ::closedir(listing);
        std::sort(names.begin(), names.end());
        for (auto &n : names) {
            candidates.push_back({path, std::move(n), ""});
        }
    }
    return {};
}

// Reads the layout of `root`. `is_root` false: nothing there to read.
Status read_layout(Root &root, bool &is_root) {
    is_root = false;
    root.cache_status = open_trusted(root.fd.get(), root.shown, "/etc/ld.so.cache",
                                     TrustedKind::File, root.cache, true);
    if (root.cache_status.ok() || !root.cache.missing) {
        root.layout = {true, {}, "/usr/bin", "/usr/share"};
        is_root = true;
        return {};
    }
    if (root.path == "/") {
        return {}; // the node itself without a loader cache: no driver from it
    }
    for (const char *dir : {"/lib64", "/lib"}) {
        TrustedOpen d;
        if (open_trusted(root.fd.get(), root.shown, dir, TrustedKind::Directory, d).ok() ||
            !d.missing) {
            is_root = true;
        }
    }
    root.layout = {false, {"/lib64", "/lib"}, "/bin", "/share"};
    return {};
}

// Records the file behind `opened` as a driver file of `kind` and keeps its
// fd; the caller adds what only its kind has (name, links, view_path).
DriverFile &add_file(NodeDriver &out, DriverFileKind kind, DriverUse use, TrustedOpen &opened) {
    DriverFile &file = out.files.emplace_back();
    file.kind = kind;
    file.node_path = opened.shown;
    file.use = use;
    file.identity = file_identity(opened.st);
    out.fds.push_back(std::move(opened.fd));
    return file;
}

Status add_libraries(Root &root, const DriverSelection &selection, NodeDriver &out) {
    for (const auto &lib : selection.libraries) {
        auto it = root.files.find(lib.dir + "/" + lib.real);
        if (it == root.files.end()) {
            return Status::failure("internal: " + lib.real + " was selected but not opened");
        }
        DriverFile &f = add_file(out, DriverFileKind::Library, lib.use, it->second);
        f.name = lib.real;
        f.links = lib.links;
    }
    return {};
}

// Whether the opened (O_PATH) file starts as an ELF program does, not "#!".
bool is_elf_program(const TrustedOpen &file) {
    const std::string self = "/proc/self/fd/" + std::to_string(file.fd.get());
    const Fd readable(::open(self.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
    std::array<char, 4> magic{};
    return readable.valid() &&
           ::pread(readable.get(), magic.data(), magic.size(), 0) ==
               static_cast<ssize_t>(magic.size()) &&
           std::string_view(magic.data(), magic.size()) == "\177ELF";
}

// Each driver program from the first of `dirs` holding it as an ELF
// program: a script of that name (a site's wrapper, which inside the jail
// finds only itself) is passed over with a note.
Status add_binaries(Root &root, const std::vector<std::string> &dirs, NodeDriver &out) {
    for (const auto &spec : driver_binaries()) {
        const std::string name(spec.path);
        for (const auto &path : dirs) {
            const TrustedOpen *dir = nullptr;
            if (auto s = lib_dir(root, path, dir); !s.ok() || dir == nullptr) {
                if (!s.ok()) {
                    return s;
                }
                continue;
            }
            std::string real;
            TrustedOpen file;
            if (auto s = open_in_dir(dir->fd.get(), dir->shown, name, real, file); !s.ok()) {
                if (file.missing) {
                    continue; // not every driver ships every tool
                }
                return refuse(root, s.message());
            }
            if (!is_elf_program(file)) {
                out.notes.push_back("passed over " + under(root.path, path) + "/" + name +
                                    ": not an ELF program (a wrapper script?); the driver's " +
                                    name + " is one");
                continue;
            }
            add_file(out, DriverFileKind::Binary, spec.use, file).name = name;
            break;
        }
    }
    return {};
}

// An optional node file or directory: found (true), missing (false), or refused.
Status open_optional(int root_fd, const std::string &shown_root, const std::string &path,
                     TrustedKind kind, TrustedOpen &opened, bool &found) {
    found = false;
    if (auto s = open_trusted(root_fd, shown_root, path, kind, opened); !s.ok()) {
        if (opened.missing) {
            return {};
        }
        return Status::failure("refusing " + under(shown_root.empty() ? "/" : shown_root, path) +
                               ": " + s.message());
    }
    found = true;
    return {};
}

// IPC directories live where the daemon runs: inside a driver container's
// root, or on the node itself.
Status add_ipc(Root &root, const DriverSearch &search, NodeDriver &out) {
    std::vector<DriverFileSpec> dirs = driver_ipc_dirs();
    if (const std::string note = mps_pipe_dir_note(search.mps_pipe_dir); !note.empty()) {
        struct stat st {};
        if (::lstat(search.mps_pipe_dir.c_str(), &st) == 0) {
            out.notes.push_back(note); // MPS runs, but its pipes cannot reach jobs
        }
    } else if (!search.mps_pipe_dir.empty()) {
        dirs.push_back({search.mps_pipe_dir, DriverUse::Compute, "the MPS pipe directory"});
    }
    TrustedOpen node;
    if (auto s = open_trusted_on_node("/", TrustedKind::Directory, node); !s.ok()) {
        return s;
    }
    for (const auto &spec : dirs) {
        const std::string path(spec.path);
        TrustedOpen opened;
        bool found = false;
        if (root.path != "/") {
            if (auto s = open_optional(root.fd.get(), root.shown, path, TrustedKind::Directory,
                                       opened, found);
                !s.ok()) {
                return s;
            }
        }
        if (!found) {
            if (auto s =
                    open_optional(node.fd.get(), "", path, TrustedKind::Directory, opened, found);
                !s.ok()) {
                return s;
            }
        }
        if (!found) {
            continue; // the daemon does not run on this node
        }
        add_file(out, DriverFileKind::IpcDir, spec.use, opened).view_path = path;
    }
    return {};
}

Status add_data(Root &root, NodeDriver &out) {
    for (const auto &spec : driver_data_files()) {
        const std::string path(spec.path);
        std::string in_root = path;
        if (path.rfind("/usr/share/", 0) == 0) {
            in_root = root.layout.share_dir + path.substr(std::string("/usr/share").size());
        }
        TrustedOpen opened;
        bool found = false;
        if (auto s =
                open_optional(root.fd.get(), root.shown, in_root, TrustedKind::File, opened, found);
            !s.ok()) {
            return s;
        }
        if (!found) {
            continue;
        }
        add_file(out, DriverFileKind::DataFile, spec.use, opened).view_path = path;
    }
    return {};
}

// Searches one root. Leaves `out` without a version when there is no driver.
Status search_root(const std::string &path, const DriverSearch &search, NodeDriver &out,
                   std::string &looked) {
    Root root;
    root.path = path;
    root.shown = path == "/" ? "" : path;
    TrustedOpen opened;
    if (auto s = open_trusted_on_node(path, TrustedKind::Directory, opened); !s.ok()) {
        if (opened.missing) {
            looked += "\n  " + path + ": does not exist";
            return {};
        }
        return Status::failure("refusing the driver root " + path + ": " + s.message());
    }
    root.fd = std::move(opened.fd);
    bool is_root = false;
    if (auto s = read_layout(root, is_root); !s.ok() || !is_root) {
        looked += "\n  " + path + ": no etc/ld.so.cache" +
                  (path == "/" ? std::string() : ", lib64/ or lib/");
        return s;
    }
    std::vector<LibraryName> candidates;
    std::string memo;
    Status listed = root.layout.from_cache ? cache_candidates(root, search.memo, candidates, memo)
                                           : listed_candidates(root, candidates);
    if (!listed.ok()) {
        return listed;
    }
    std::vector<LibraryName> resolved;
    NodeDriver found;
    if (auto s = resolve(root, candidates, resolved, found.notes); !s.ok()) {
        return s;
    }
    if (!root.layout.from_cache) {
        if (auto s = keep_own_arch(root, resolved, found.notes); !s.ok()) {
            return s;
        }
    }
    DriverSelection selection;
    if (auto s = select_driver_libraries(resolved, selection); !s.ok()) {
        return refuse(root, s.message());
    }
    if (selection.version.empty()) {
        out.memo = memo;
        looked +=
            "\n  " + path + ": " +
            (root.layout.from_cache ? "its etc/ld.so.cache lists" : "its lib64/ and lib/ hold") +
            " no libcuda.so.1 or libnvidia-ml.so.1";
        return {};
    }
    found.root = path;
    found.version = selection.version;
    found.memo = memo;
    for (const auto &i : selection.ignored) {
        found.notes.push_back("ignored " + i);
    }
    if (auto s = add_libraries(root, selection, found); !s.ok()) {
        return s;
    }
    if (auto s = add_binaries(root, driver_program_dirs(selection, root.layout.bin_dir), found);
        !s.ok()) {
        return s;
    }
    if (auto s = add_ipc(root, search, found); !s.ok()) {
        return s;
    }
    if (auto s = add_data(root, found); !s.ok()) {
        return s;
    }
    out = std::move(found);
    return {};
}

} // namespace

FileIdentity file_identity(const struct stat &st) {
    FileIdentity id;
    id.dev = st.st_dev;
    id.ino = st.st_ino;
    id.size = static_cast<std::uint64_t>(st.st_size);
    id.mtime_sec = st.st_mtim.tv_sec;
    id.mtime_nsec = st.st_mtim.tv_nsec;
    id.ctime_sec = st.st_ctim.tv_sec;
    id.ctime_nsec = st.st_ctim.tv_nsec;
    return id;
}

Status discover_node_driver(const DriverSearch &search, NodeDriver &out) {
    out = NodeDriver{};
    if (search.mode == GpuMode::Off) {
        return {};
    }
    std::string looked;
    for (const auto &root : search.roots) {
        if (auto s = check_absolute_path("driver root", root); !s.ok()) {
            return s;
        }
        if (auto s = search_root(root, search, out, looked); !s.ok()) {
            return s;
        }
        if (out.found()) {
            return {};
        }
    }
    if (search.mode == GpuMode::On) {
        return Status::failure("no NVIDIA driver found on this node (gpu=on); looked for "
                               "libcuda.so.1 and libnvidia-ml.so.1 in:" +
                               looked + "\ninstall the driver, or name the root it is mounted at");
    }
    return {};
}

} // namespace sjail
