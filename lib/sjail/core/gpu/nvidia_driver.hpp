// SPDX-License-Identifier: Apache-2.0
// The NVIDIA driver's user-space half, as the jail needs it. Pure.
//
// The driver's user-space files (libcuda, NVML, nvidia-smi, ...) must match
// the node's kernel module, so they never live in the shared jail: each node
// binds its own copies into its jail view, in one tree at DriverView::dir
// (default /usr/local/nvidia: lib64/ and bin/, the layout CUDA images and the
// NVIDIA container toolkit use), and binds a node-local ld.so.cache that
// lists lib64/ ahead of the jail's own directories.
//
// This file decides which files are the driver's and how they appear in the
// view; sys/gpu/nvidia_driver.hpp finds and opens them on a node, and
// sys/gpu/nvidia_driver_mount.hpp mounts the tree.
#pragma once

#include "sjail/core/gpu/ld_cache.hpp"
#include "sjail/core/gpu_mode.hpp"
#include "sjail/core/status.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sjail {

// What a driver file is for, in the terms of NVIDIA_DRIVER_CAPABILITIES.
enum class DriverUse {
    Compute,  // CUDA and OpenCL
    Utility,  // NVML and nvidia-smi
    Video,    // NVDEC, NVENC, optical flow, VDPAU
    Graphics, // OpenGL, EGL, Vulkan, OptiX
    Other,    // a driver library this code does not know yet (a newer driver)
};
std::string_view driver_use_name(DriverUse use);

// ---- which files are the driver's ----

// "libcuda.so.580.159.04" -> "libcuda"; "" when the name has no ".so".
std::string_view library_stem(std::string_view file_name);

// True for the NVIDIA driver's library families: libcuda, libcudadebugger,
// libnvcuvid, libnvoptix, libnvidia-* (but not the container toolkit's
// libnvidia-container*) and the vendor libraries lib*_nvidia (GLX, EGL,
// GLESv1_CM, GLESv2, vdpau).
bool is_driver_library_stem(std::string_view stem);
bool is_driver_library_name(std::string_view file_name); // stem test on a file name

DriverUse driver_library_use(std::string_view stem);

// A driver version: two or three dot-separated numbers, the first at least
// three digits long ("580.159.04", "550.54.15"); sonames ("1") and other
// projects' versions ("1.1.13") do not qualify.
bool is_driver_version(std::string_view text);

// "libcuda.so.580.159.04" -> "580.159.04"; "" when what follows ".so." is not
// a driver version.
std::string driver_version_suffix(std::string_view file_name);

// One library name in a directory, with the regular file that its chain of
// symlinks ends at inside the same directory (`real` == `name` for a file).
struct LibraryName {
    std::string dir;  // node path of the directory
    std::string name; // "libcuda.so.1"
    std::string real; // "libcuda.so.580.159.04"

    bool operator==(const LibraryName &) const = default;
};

// The names that the node's loader cache resolves to driver-family files:
// entries of `arch` (the node's: kBuildArch) outside glibc-hwcaps
// subdirectories, first entry per name (the one the loader uses), in cache
// order; entries of other architectures (a multiarch node's i386 driver)
// are skipped. `real` is left empty for the system layer to fill in. `dir`
// is the entry path's directory.
std::vector<LibraryName> driver_library_candidates(const LdCache &cache, const Arch &arch);

// A driver root without a loader cache (the container toolkit's layout) has
// no ldconfig to say what its libraries are built for: each file says it in
// its ELF header. Why the loader of `arch` cannot load the library whose
// first bytes are `header` (at least 20, see elf_arch_name): "" when it can
// (an ELF file of arch's class, byte order and machine), else "is built for
// x86-64" (or "i386", "big-endian ELF machine 183", ...), "is not an ELF
// file" or "is an ELF file of unknown class 7".
std::string library_arch_mismatch(std::string_view header, const Arch &arch);

// Keeps the names (of a root without a loader cache) whose files the loader
// of `arch` (the node's: kBuildArch) can load; `mismatch[i]` is
// library_arch_mismatch of names[i]'s file. The others are left out, each
// with a line in `ignored` ("DIR/NAME: is built for i386, this node is
// x86-64"), as the loader skips them (the toolkit's lib/ holds the 32-bit
// copies). An error, as for a loader cache of another architecture: a
// libcuda.so.1 or libnvidia-ml.so.1 there whose every copy is for another
// architecture (or no ELF file), naming the first of them, what it is built
// for and the node's architecture. Paths in messages start with
// `shown_root`, the root's node path ("" for the node's "/").
Status keep_own_arch_libraries(const std::vector<LibraryName> &names,
                               const std::vector<std::string> &mismatch, const Arch &arch,
                               std::string_view shown_root, std::vector<LibraryName> &kept,
                               std::vector<std::string> &ignored);

struct DriverLibrary {
    std::string dir;                // node directory holding the real file
    std::string real;               // "libcuda.so.580.159.04"
    std::vector<std::string> links; // names that lead to it: "libcuda.so", "libcuda.so.1"
    DriverUse use = DriverUse::Other;

    bool operator==(const DriverLibrary &) const = default;
};

struct DriverSelection {
    std::string version;                  // empty: the names hold no driver
    std::vector<DriverLibrary> libraries; // sorted by `real`
    std::vector<std::string> ignored;     // "DIR/NAME: why", for the log
};

// Picks the driver out of resolved names. The version is read from the file
// behind libcuda.so.1 (or libnvidia-ml.so.1 on a driver without CUDA); every
// driver-family file named <stem>.so.<version> is the driver's. Files of
// another version (a half-removed older driver, another project's
// libnvidia-egl-wayland) are ignored with a reason, except libnvidia-nvvm70,
// the legacy NVVM that the driver ships under its own version. Errors: a
// libcuda.so.1 whose file carries no version, or libcuda and NVML of two
// different versions (an upgrade half done).
Status select_driver_libraries(const std::vector<LibraryName> &names, DriverSelection &out);

// ---- other driver files on the node ----

struct DriverFileSpec {
    std::string_view path; // binaries: a file name; IPC and data: an absolute node path
    DriverUse use;
    std::string_view reason; // why a job needs it
};

// Where a driver root's programs are looked for, in order: a tree of the
// driver's own (the container toolkit's /usr/local/nvidia, an installer's
// prefix) keeps them in the bin/ beside the lib64/ or lib/ that holds
// libcuda.so.1 (NVML's on a driver without CUDA); then `bin_dir`, the
// root's usual place (/usr/bin). A program of the same name found first in
// /usr/bin may be a site's wrapper of the tree's.
std::vector<std::string> driver_program_dirs(const DriverSelection &selection,
                                             const std::string &bin_dir);

// Programs jobs run: nvidia-smi, nvidia-debugdump, the MPS control and
// server. Daemons that serve the whole node (nvidia-persistenced,
// nv-fabricmanager, nvidia-imex) are left out: jobs talk to them.
const std::vector<DriverFileSpec> &driver_binaries();

// Directories holding the sockets of node daemons that user space talks to.
// Bound as directories, so a daemon restart (a new socket) reaches jobs.
const std::vector<DriverFileSpec> &driver_ipc_dirs();

// The MPS pipe directory (CUDA_MPS_PIPE_DIRECTORY of the node's MPS control
// daemon; /tmp/nvidia-mps by default) can be shared with jobs only when it is
// not below /tmp: the jail's /tmp is the users' node-local scratch, so no
// mount point there is safe. Empty when shareable, else a note saying why not.
std::string mps_pipe_dir_note(std::string_view node_dir);

// Data files that driver libraries read at run time, bound at the same path
// when the jail has a mount point for them. None is needed for CUDA or
// NVML; OpenCL needs its ICD file, graphics the rest.
const std::vector<DriverFileSpec> &driver_data_files();

// ---- the view: where the files appear inside the jail ----

struct DriverView {
    std::string dir{kDriverViewDir}; // an empty, root-owned directory in the jail
};
std::string view_lib_dir(const DriverView &view); // DIR/lib64
std::string view_bin_dir(const DriverView &view); // DIR/bin

// Identity of a file, for the stamp.
struct FileIdentity {
    std::uint64_t dev = 0;
    std::uint64_t ino = 0;
    std::uint64_t size = 0;
    std::int64_t mtime_sec = 0;
    std::int64_t mtime_nsec = 0;
    std::int64_t ctime_sec = 0;
    std::int64_t ctime_nsec = 0;

    bool operator==(const FileIdentity &) const = default;
};

enum class DriverFileKind { Library, Binary, IpcDir, DataFile };

// One verified file or directory of the node's driver.
struct DriverFile {
    DriverFileKind kind = DriverFileKind::Library;
    std::string node_path;          // where it is on the node (the real file, never a link)
    std::string name;               // library/binary: its name in lib64/ or bin/
    std::vector<std::string> links; // library: soname links to create beside it
    std::string view_path;          // IPC/data: where it is bound in the jail
    DriverUse use = DriverUse::Other;
    FileIdentity identity;
};

// A bind of DriverFile `file` onto `target` (absolute, inside the jail).
// Targets inside the driver tree are created by the mount code; the others
// need a mount point in the jail: when it is missing the bind is skipped and
// `missing_note` says how to add it.
struct DriverBind {
    std::size_t file = 0;
    std::string target;
    bool in_tree = false;
    bool read_only = true;
    std::string missing_note;

    bool operator==(const DriverBind &) const = default;
};

// The note for a bind outside the tree whose mount point in the jail cannot
// be used (`why`: a symlink, the wrong kind, not root's), with the fix.
std::string unusable_mount_point_note(const DriverBind &bind, const DriverFile &file,
                                      std::string_view why);

struct DriverLink {
    std::string path;   // "/usr/local/nvidia/lib64/libcuda.so.1"
    std::string target; // "libcuda.so.580.159.04" (same directory)

    bool operator==(const DriverLink &) const = default;
};

struct DriverPlan {
    std::string tree;                      // DriverView::dir: a fresh tmpfs holds the tree
    std::vector<std::string> directories;  // created in the tree, parents first
    std::vector<DriverBind> binds;         // tree binds first, then the rest sorted by target
    std::vector<DriverLink> links;         // sorted by path
    std::vector<std::string> library_dirs; // for the loader cache: DIR/lib64
};

// Lays the files out in the view. Errors: two files wanting the same name,
// a name that is not a plain file name.
Status plan_driver_view(const std::vector<DriverFile> &files, const DriverView &view,
                        DriverPlan &out);

// "LABEL dev=... ino=... size=... mtime=S.N ctime=S.N\n": one file's line in a stamp.
std::string identity_stamp_line(std::string_view label, const FileIdentity &id);

// A canonical text of the driver's identity: the version and, per file, its
// kind, node path, device, inode, size, mtime and ctime. When it changes (an
// upgrade, a reinstall, a daemon that started and made its socket
// directory), the node namespace must be rebuilt.
std::string driver_stamp(std::string_view version, const std::vector<DriverFile> &files);

} // namespace sjail
