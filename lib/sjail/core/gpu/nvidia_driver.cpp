// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/gpu/nvidia_driver.hpp"

#include "sjail/core/path_rules.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace sjail {
namespace {

bool all_digits(std::string_view s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Libraries the driver ships under their own version, not the driver's.
// libnvidia-nvvm70 is the legacy NVVM (CUDA 11 era IR) that libnvidia-nvvm loads.
bool has_own_version(std::string_view stem) {
    return stem == "libnvidia-nvvm70";
}

// Appended in place: GCC 12 at -O3 reports a false -Wrestrict inside
// std::string for `"/" + std::string(name)`.
std::string join(std::string_view dir, std::string_view name) {
    std::string path(dir == "/" ? std::string_view() : dir);
    path.reserve(path.size() + 1 + name.size());
    path += '/';
    path += name;
    return path;
}

// The version of a "<stem>.so.<version>" file, checking the stem as well.
std::string version_of(std::string_view real, std::string_view stem) {
    return library_stem(real) == stem ? driver_version_suffix(real) : "";
}

struct Versions {
    const LibraryName *cuda = nullptr;
    const LibraryName *nvml = nullptr;
};

Versions find_version_sources(const std::vector<LibraryName> &names) {
    Versions v;
    for (const auto &n : names) {
        if (n.name == "libcuda.so.1" && v.cuda == nullptr) {
            v.cuda = &n;
        } else if (n.name == "libnvidia-ml.so.1" && v.nvml == nullptr) {
            v.nvml = &n;
        }
    }
    return v;
}

Status version_from(const LibraryName &n, std::string_view stem, std::string &version) {
    version = version_of(n.real, stem);
    if (version.empty()) {
        return Status::failure(
            join(n.dir, n.name) + " is the file " + n.real +
            ", which carries no driver version in its name; the NVIDIA driver installs " +
            std::string(stem) + ".so.<version> with " + n.name +
            " linking to it (is this a CUDA stub library? remove it from the loader path)");
    }
    return {};
}

Status pick_version(const std::vector<LibraryName> &names, std::string &version) {
    const Versions sources = find_version_sources(names);
    std::string cuda;
    std::string nvml;
    if (sources.cuda != nullptr) {
        if (auto s = version_from(*sources.cuda, "libcuda", cuda); !s.ok()) {
            return s;
        }
    }
    if (sources.nvml != nullptr) {
        if (auto s = version_from(*sources.nvml, "libnvidia-ml", nvml); !s.ok()) {
            return s;
        }
    }
    if (!cuda.empty() && !nvml.empty() && cuda != nvml) {
        return Status::failure("the node's libcuda.so.1 is driver " + cuda +
                               " but its libnvidia-ml.so.1 is driver " + nvml +
                               " (an upgrade half done?); reinstall the driver so that both "
                               "match the loaded kernel module");
    }
    version = cuda.empty() ? nvml : cuda;
    return {};
}

bool is_plain_name(std::string_view name) {
    return !name.empty() && name != "." && name != ".." &&
           name.find_first_of("/ \t\n:") == std::string_view::npos;
}

std::string_view kind_name(DriverFileKind kind) {
    switch (kind) {
    case DriverFileKind::Library:
        return "library";
    case DriverFileKind::Binary:
        return "binary";
    case DriverFileKind::IpcDir:
        return "ipc";
    case DriverFileKind::DataFile:
        return "data";
    }
    return "?";
}

} // namespace

std::string_view driver_use_name(DriverUse use) {
    switch (use) {
    case DriverUse::Compute:
        return "compute";
    case DriverUse::Utility:
        return "utility";
    case DriverUse::Video:
        return "video";
    case DriverUse::Graphics:
        return "graphics";
    case DriverUse::Other:
        return "other";
    }
    return "other";
}

std::string_view library_stem(std::string_view file_name) {
    const auto at = file_name.find(".so");
    if (at == std::string_view::npos || at == 0) {
        return {};
    }
    const std::string_view after = file_name.substr(at + 3);
    if (!after.empty() && after.front() != '.') {
        return {}; // "libfoo.sox"
    }
    return file_name.substr(0, at);
}

bool is_driver_library_stem(std::string_view stem) {
    if (stem == "libcuda" || stem == "libcudadebugger" || stem == "libnvcuvid" ||
        stem == "libnvoptix") {
        return true;
    }
    if (stem.starts_with("libnvidia-")) {
        // The container toolkit's own libraries are not part of the driver.
        return !stem.starts_with("libnvidia-container");
    }
    // Vendor libraries that glvnd, EGL and VDPAU loaders open by name.
    return stem.starts_with("lib") && stem.ends_with("_nvidia") && stem.size() > 10;
}

bool is_driver_library_name(std::string_view file_name) {
    const std::string_view stem = library_stem(file_name);
    return !stem.empty() && is_driver_library_stem(stem);
}

DriverUse driver_library_use(std::string_view stem) {
    static const std::map<std::string_view, DriverUse, std::less<>> known = {
        {"libcuda", DriverUse::Compute},
        {"libcudadebugger", DriverUse::Compute},
        {"libnvidia-ptxjitcompiler", DriverUse::Compute},
        {"libnvidia-nvvm", DriverUse::Compute},
        {"libnvidia-nvvm70", DriverUse::Compute},
        {"libnvidia-gpucomp", DriverUse::Compute},
        {"libnvidia-tileiras", DriverUse::Compute},
        {"libnvidia-opencl", DriverUse::Compute},
        {"libnvidia-compiler", DriverUse::Compute},
        {"libnvidia-fatbinaryloader", DriverUse::Compute},
        {"libnvidia-pkcs11", DriverUse::Compute},
        {"libnvidia-pkcs11-openssl3", DriverUse::Compute},
        {"libnvidia-allocator", DriverUse::Compute},
        {"libnvidia-ml", DriverUse::Utility},
        {"libnvidia-cfg", DriverUse::Utility},
        {"libnvidia-nscq", DriverUse::Utility},
        {"libnvcuvid", DriverUse::Video},
        {"libnvidia-encode", DriverUse::Video},
        {"libnvidia-opticalflow", DriverUse::Video},
        {"libvdpau_nvidia", DriverUse::Video},
        {"libnvoptix", DriverUse::Graphics},
        {"libnvidia-rtcore", DriverUse::Graphics},
        {"libnvidia-glcore", DriverUse::Graphics},
        {"libnvidia-eglcore", DriverUse::Graphics},
        {"libnvidia-glsi", DriverUse::Graphics},
        {"libnvidia-tls", DriverUse::Graphics},
        {"libnvidia-fbc", DriverUse::Graphics},
        {"libnvidia-ifr", DriverUse::Graphics},
        {"libnvidia-glvkspirv", DriverUse::Graphics},
        {"libnvidia-cbl", DriverUse::Graphics},
        {"libnvidia-ngx", DriverUse::Graphics},
        {"libnvidia-vksc-core", DriverUse::Graphics},
        {"libnvidia-api", DriverUse::Graphics},
        {"libnvidia-present", DriverUse::Graphics},
        {"libnvidia-wayland-client", DriverUse::Graphics},
    };
    if (auto it = known.find(stem); it != known.end()) {
        return it->second;
    }
    if (stem.ends_with("_nvidia") || stem.starts_with("libnvidia-egl")) {
        return DriverUse::Graphics; // GLX, EGL, GLES vendor libraries and EGL platforms
    }
    return DriverUse::Other;
}

bool is_driver_version(std::string_view text) {
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    while (true) {
        const auto dot = text.find('.', start);
        parts.push_back(text.substr(start, dot == std::string_view::npos ? std::string_view::npos
                                                                         : dot - start));
        if (dot == std::string_view::npos) {
            break;
        }
        start = dot + 1;
    }
    if (parts.size() < 2 || parts.size() > 3 || parts.front().size() < 3) {
        return false;
    }
    return std::all_of(parts.begin(), parts.end(), all_digits);
}

std::string driver_version_suffix(std::string_view file_name) {
    const std::string_view stem = library_stem(file_name);
    if (stem.empty() || file_name.size() <= stem.size() + 4) {
        return "";
    }
    const std::string_view rest = file_name.substr(stem.size() + 4); // after "<stem>.so."
    return is_driver_version(rest) ? std::string(rest) : "";
}

std::vector<LibraryName> driver_library_candidates(const LdCache &cache, const Arch &arch) {
    std::vector<LibraryName> out;
    std::set<std::string, std::less<>> seen;
    for (const auto &e : cache.entries) {
        if (e.flags != arch.ld_cache_flags || !e.hwcaps_subdir.empty() ||
            !is_driver_library_name(e.name) || !seen.insert(e.name).second) {
            continue;
        }
        if (!e.path.starts_with('/')) {
            continue; // ldconfig always records absolute paths
        }
        out.push_back({parent_dir(e.path), base_name(e.path), ""});
    }
    return out;
}

std::string library_arch_mismatch(std::string_view header, const Arch &arch) {
    std::string error;
    const std::string found = elf_arch_name(header, error);
    if (!error.empty()) {
        return "is " + error;
    }
    return found == arch.name ? "" : "is built for " + found;
}

Status keep_own_arch_libraries(const std::vector<LibraryName> &names,
                               const std::vector<std::string> &mismatch, const Arch &arch,
                               std::string_view shown_root, std::vector<LibraryName> &kept,
                               std::vector<std::string> &ignored) {
    kept.clear();
    if (mismatch.size() != names.size()) {
        return Status::failure("internal: driver libraries and their architectures differ in "
                               "number");
    }
    const std::string node(arch.name);
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (mismatch[i].empty()) {
            kept.push_back(names[i]);
        } else {
            ignored.push_back(std::string(shown_root) + join(names[i].dir, names[i].name) + ": " +
                              mismatch[i] + ", this node is " + node);
        }
    }
    // The libraries the driver's version is read from: a name with no copy
    // the loader can load, only another architecture's, is refused.
    for (const char *name : {"libcuda.so.1", "libnvidia-ml.so.1"}) {
        const auto named = [&](const LibraryName &n) { return n.name == name; };
        if (std::ranges::any_of(kept, named)) {
            continue;
        }
        const auto it = std::ranges::find_if(names, named);
        if (it == names.end()) {
            continue;
        }
        const auto i = static_cast<std::size_t>(it - names.begin());
        return Status::failure(std::string(shown_root) + join(it->dir, it->name) + " " +
                               mismatch[i] + "; this node is " + node +
                               ": gpu_driver_root= must hold the node's own driver (install the "
                               "NVIDIA driver built for " +
                               node +
                               " there, or point gpu_driver_root= at the root that holds it)");
    }
    return {};
}

Status select_driver_libraries(const std::vector<LibraryName> &names, DriverSelection &out) {
    out = DriverSelection{};
    std::string version;
    if (auto s = pick_version(names, version); !s.ok()) {
        return s;
    }
    if (version.empty()) {
        return {};
    }
    out.version = version;
    std::map<std::string, DriverLibrary, std::less<>> by_real;
    std::set<std::string, std::less<>> names_taken;
    for (const auto &n : names) {
        const std::string shown = join(n.dir, n.name);
        const std::string_view stem = library_stem(n.real);
        if (!is_driver_library_stem(stem)) {
            out.ignored.push_back(shown + ": leads to " + n.real + ", not a driver library");
            continue;
        }
        const std::string v = driver_version_suffix(n.real);
        if (v != version && !has_own_version(stem)) {
            out.ignored.push_back(shown + ": " + n.real + " is not of driver " + version);
            continue;
        }
        if (!names_taken.insert(n.name).second) {
            out.ignored.push_back(shown + ": the loader finds " + n.name + " elsewhere first");
            continue;
        }
        auto [it, added] = by_real.try_emplace(n.real);
        DriverLibrary &lib = it->second;
        if (added) {
            lib.dir = n.dir;
            lib.real = n.real;
            lib.use = driver_library_use(stem);
        } else if (lib.dir != n.dir) {
            out.ignored.push_back(shown + ": " + n.real + " is taken from " + lib.dir);
            continue;
        }
        if (n.name != n.real) {
            lib.links.push_back(n.name);
        }
    }
    for (auto &[real, lib] : by_real) {
        std::sort(lib.links.begin(), lib.links.end());
        out.libraries.push_back(std::move(lib));
    }
    return {};
}

namespace {

// The directory of the library the driver's version was read from.
std::string version_library_dir(const DriverSelection &selection) {
    for (std::string_view stem : {"libcuda.so.", "libnvidia-ml.so."}) {
        for (const auto &lib : selection.libraries) {
            if (lib.real.rfind(stem, 0) == 0) {
                return lib.dir;
            }
        }
    }
    return {};
}

// "/usr/local/nvidia/lib64" -> "/usr/local/nvidia"; "" when `dir` is no
// lib64/ or lib/ of a tree of its own (/usr/lib64, /lib, a multiarch dir).
std::string own_tree_of(const std::string &dir) {
    for (std::string_view leaf : {"/lib64", "/lib"}) {
        if (dir.size() > leaf.size() && dir.ends_with(leaf)) {
            std::string tree = dir.substr(0, dir.size() - leaf.size());
            return tree == "/usr" ? std::string() : tree;
        }
    }
    return {};
}

} // namespace

std::vector<std::string> driver_program_dirs(const DriverSelection &selection,
                                             const std::string &bin_dir) {
    std::vector<std::string> dirs;
    if (const std::string tree = own_tree_of(version_library_dir(selection)); !tree.empty()) {
        dirs.push_back(tree + "/bin");
    }
    if (std::find(dirs.begin(), dirs.end(), bin_dir) == dirs.end()) {
        dirs.push_back(bin_dir);
    }
    return dirs;
}

const std::vector<DriverFileSpec> &driver_binaries() {
    static const std::vector<DriverFileSpec> bins = {
        {"nvidia-smi", DriverUse::Utility, "users check their GPUs; prints NVML's view"},
        {"nvidia-debugdump", DriverUse::Utility, "collects GPU state for an NVIDIA bug report"},
        {"nvidia-cuda-mps-control", DriverUse::Compute,
         "a job may start its own MPS daemon to share its GPUs between its ranks"},
        {"nvidia-cuda-mps-server", DriverUse::Compute,
         "started by nvidia-cuda-mps-control, looked up next to it"},
    };
    return bins;
}

const std::vector<DriverFileSpec> &driver_ipc_dirs() {
    static const std::vector<DriverFileSpec> dirs = {
        {"/run/nvidia-persistenced", DriverUse::Utility,
         "libnvidia-ml and libcuda ask nvidia-persistenced (its socket) to keep GPUs "
         "initialised; without it every job pays the GPU's start-up"},
        {"/run/nvidia-fabricmanager", DriverUse::Compute,
         "on NVSwitch systems, NVML reads the fabric state from nv-fabricmanager's socket"},
    };
    return dirs;
}

const std::vector<DriverFileSpec> &driver_data_files() {
    static const std::vector<DriverFileSpec> files = {
        {"/etc/OpenCL/vendors/nvidia.icd", DriverUse::Compute,
         "the OpenCL ICD loader finds libnvidia-opencl.so.1 through it"},
        {"/usr/share/nvidia/nvoptix.bin", DriverUse::Graphics,
         "OptiX (libnvoptix) loads its built-in programs and denoiser from it"},
        {"/usr/share/glvnd/egl_vendor.d/10_nvidia.json", DriverUse::Graphics,
         "the glvnd EGL loader finds libEGL_nvidia.so.0 through it (headless rendering)"},
        {"/usr/share/vulkan/icd.d/nvidia_icd.json", DriverUse::Graphics,
         "the Vulkan loader finds the driver (libGLX_nvidia.so.0) through it"},
        {"/usr/share/vulkan/implicit_layer.d/nvidia_layers.json", DriverUse::Graphics,
         "the driver's Vulkan layers (optimus, present)"},
    };
    return files;
}

std::string mps_pipe_dir_note(std::string_view node_dir) {
    if (!is_same_or_below(node_dir, "/tmp")) {
        return "";
    }
    return "the MPS pipe directory " + std::string(node_dir) +
           " is not shared with jobs: /tmp in the jail belongs to users; run "
           "nvidia-cuda-mps-control with CUDA_MPS_PIPE_DIRECTORY set to a root-owned "
           "directory such as /run/nvidia-mps, and give slurm-jail the same directory";
}

std::string view_lib_dir(const DriverView &view) {
    return view.dir + "/lib64";
}

std::string view_bin_dir(const DriverView &view) {
    return view.dir + "/bin";
}

Status plan_driver_view(const std::vector<DriverFile> &files, const DriverView &view,
                        DriverPlan &out) {
    out = DriverPlan{};
    if (auto s = check_absolute_path("driver view dir", view.dir); !s.ok()) {
        return s;
    }
    if (view.dir == "/") {
        return Status::failure("the driver view dir cannot be the jail root");
    }
    out.tree = view.dir;
    const std::string lib = view_lib_dir(view);
    const std::string bin = view_bin_dir(view);
    out.directories = {lib, bin};
    out.library_dirs = {lib};
    std::set<std::string, std::less<>> taken;
    std::vector<DriverBind> outside;
    for (std::size_t i = 0; i < files.size(); ++i) {
        const DriverFile &f = files[i];
        if (f.kind == DriverFileKind::Library || f.kind == DriverFileKind::Binary) {
            const std::string &dir = f.kind == DriverFileKind::Library ? lib : bin;
            for (const auto &name : f.links) {
                if (!is_plain_name(name) || !taken.insert(join(dir, name)).second) {
                    return Status::failure("driver file name " + name + " (for " + f.node_path +
                                           ") is not a plain file name or is used twice");
                }
                out.links.push_back({join(dir, name), f.name});
            }
            if (!is_plain_name(f.name) || !taken.insert(join(dir, f.name)).second) {
                return Status::failure("driver file name " + f.name + " (" + f.node_path +
                                       ") is not a plain file name or is used twice");
            }
            out.binds.push_back({i, join(dir, f.name), true, true, ""});
            continue;
        }
        if (auto s = check_absolute_path("driver file target", f.view_path); !s.ok()) {
            return s;
        }
        if (is_same_or_below(f.view_path, view.dir) || !taken.insert(f.view_path).second) {
            return Status::failure(f.view_path + " is inside the driver tree or bound twice");
        }
        const bool dir = f.kind == DriverFileKind::IpcDir;
        outside.push_back({i, f.view_path, false, !dir,
                           "the jail has no " + f.view_path + " to bind the node's " + f.node_path +
                               " onto; create it in the jail image as a root-owned " +
                               (dir ? "directory" : "file") +
                               " (mode 0755 or 0644) if jobs need it"});
    }
    std::sort(outside.begin(), outside.end(),
              [](const DriverBind &a, const DriverBind &b) { return a.target < b.target; });
    out.binds.insert(out.binds.end(), outside.begin(), outside.end());
    std::sort(out.links.begin(), out.links.end(),
              [](const DriverLink &a, const DriverLink &b) { return a.path < b.path; });
    return {};
}

std::string unusable_mount_point_note(const DriverBind &bind, const DriverFile &file,
                                      std::string_view why) {
    const bool dir = file.kind == DriverFileKind::IpcDir;
    return "skipped the node's " + file.node_path + " (optional): " + std::string(why) +
           "; if jobs need it, make " + bind.target + " in the jail image a root-owned " +
           (dir ? "directory" : "file") + " (mode 0755 or 0644), not a symlink";
}

std::string identity_stamp_line(std::string_view label, const FileIdentity &id) {
    return std::string(label) + " dev=" + std::to_string(id.dev) +
           " ino=" + std::to_string(id.ino) + " size=" + std::to_string(id.size) +
           " mtime=" + std::to_string(id.mtime_sec) + "." + std::to_string(id.mtime_nsec) +
           " ctime=" + std::to_string(id.ctime_sec) + "." + std::to_string(id.ctime_nsec) + "\n";
}

std::string driver_stamp(std::string_view version, const std::vector<DriverFile> &files) {
    std::vector<std::string> lines;
    lines.reserve(files.size());
    for (const auto &f : files) {
        lines.push_back(
            identity_stamp_line(std::string(kind_name(f.kind)) + " " + f.node_path, f.identity));
    }
    std::sort(lines.begin(), lines.end());
    std::string text = "nvidia-driver " + std::string(version) + "\n";
    for (const auto &l : lines) {
        text += l;
    }
    return text;
}

} // namespace sjail
