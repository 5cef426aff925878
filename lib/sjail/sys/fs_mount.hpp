// SPDX-License-Identifier: Apache-2.0
// Making a fresh filesystem (the jail's /proc, a tmpfs for /run, /tmp or the
// driver tree) as a detached mount that the caller then attaches where it
// belongs. The only place that calls fsopen, fsconfig and fsmount.
#pragma once

#include "sjail/core/status.hpp"
#include "sjail/sys/fd.hpp"

#include <span>

namespace sjail {

// One string parameter of a new filesystem, as fsconfig(2) takes it.
struct FsParam {
    const char *key;
    const char *value;
};

// A new filesystem of type `fstype` ("tmpfs", "proc") set up with `params`,
// as a detached mount with the mount attributes `attrs` (MOUNT_ATTR_*):
// nothing is attached anywhere yet. On failure the Fd is invalid and errno
// tells why. No allocation: safe in a child forked from threads.
[[nodiscard]] Fd make_mount(const char *fstype, std::span<const FsParam> params,
                            unsigned attrs) noexcept;

// The same, with a message naming the filesystem and its parameters.
[[nodiscard]] Status make_mount(const char *fstype, std::span<const FsParam> params, unsigned attrs,
                                Fd &out);

} // namespace sjail
