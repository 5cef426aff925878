// SPDX-License-Identifier: Apache-2.0
// A node-local /etc/ld.so.cache for a jail view: the jail's own libraries
// plus the node's driver, so that dlopen("libcuda.so.1") and normally linked
// CUDA programs find the node's driver with no LD_LIBRARY_PATH. The jail's
// own cache and files are never touched: the builder binds the result over
// the view's /etc/ld.so.cache.
#pragma once

#include "sjail/core/gpu/ld_cache.hpp"
#include "sjail/core/status.hpp"
#include "sjail/sys/trusted_path.hpp"

#include <string>
#include <vector>

namespace sjail {

struct LoaderCacheRequest {
    // The view's root as the caller sees it (in the builder: the jail path,
    // bound onto itself, with the driver tree mounted). Root-owned all the way.
    std::string view_root;
    // Directories inside the view searched ahead of the jail's own, e.g.
    // DriverPlan::library_dirs ("/usr/local/nvidia/lib64").
    std::vector<std::string> first_dirs;
    // Names that must resolve into first_dirs in the result (the driver's
    // soname links); a jail copy of libcuda.so.1 must never win.
    std::vector<std::string> expect_first;
    // The node-local file to write. Its directory must be root-owned and
    // closed to group and others; a work directory OUTPUT.work is made beside it.
    std::string output;
    // The node's ldconfig (open_ldconfig_program: Ubuntu's wrapper script
    // gives way to the ELF ldconfig.real beside it). glibc's is statically
    // linked, so it runs the same whatever the jail holds.
    std::string ldconfig = "/sbin/ldconfig";
    int time_limit_ms = 30000;
};

// The node's ldconfig program, opened for reading (to be run with fexecve):
// `configured` when it is an ELF program, else `configured`.real when that is
// one (Ubuntu's /sbin/ldconfig is a shell script around /sbin/ldconfig.real).
// A script is never run. Root-owned and closed to others, as open_trusted.
Status open_ldconfig_program(const std::string &configured, TrustedOpen &exe);

// What ldconfig would read in the view: /etc, /etc/ld.so.conf and every file
// it includes, every directory they list, the built-in /lib, /usr/lib and
// their multiarch directories, and `first_dirs`. Each must be
// root-owned and closed to group and others (symlinks followed only where
// root placed them): otherwise a user could put a library into every job.
// `dirs_checked` receives the directories that exist, in ldconfig's order.
Status check_loader_inputs(int view_root, const std::vector<std::string> &first_dirs,
                           std::vector<std::string> *dirs_checked = nullptr);

// What the node-local cache was built from, for the namespace stamp: the
// identity of the jail's own /etc/ld.so.cache, which ldconfig in the jail
// replaces whenever a package adds or removes libraries there. When it
// changes, the node-local cache is stale and must be built again.
Status jail_loader_stamp(const std::string &jail, std::string &out);

// The same line from what the node's kernel already holds (its lookup and
// attribute caches; `jail_root` an fd of the checked jail), so that a
// network filesystem is not asked. False when the kernel would have to ask
// it (an expired or missing cache entry) or when anything is not as
// jail_loader_stamp wants it: then ask with jail_loader_stamp, which also
// says what is wrong.
bool cached_jail_loader_stamp(int jail_root, std::string &out);

// Checks the inputs, then runs `ldconfig -X -i -r VIEW -C /tmp/ld.so.cache
// -f /tmp/ld.so.conf` in a child with its own mount namespace, where the
// view is read-only and a node-local work directory is mounted on the view's
// /tmp (ldconfig chroots into the view, so its output must be inside it; the
// read-only view also stops ldconfig from writing the jail's
// /var/cache/ldconfig/aux-cache, which it otherwise does even with -i).
// The conf lists first_dirs, then includes the jail's /etc/ld.so.conf.
// -X: ldconfig never creates or changes links. The child is killed after
// time_limit_ms. The result is parsed and checked before it replaces
// `output`. Call from a single-threaded process (the namespace builder).
Status build_loader_cache(const LoaderCacheRequest &request, LdCache *built = nullptr);

} // namespace sjail
