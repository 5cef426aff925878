# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# The CPU architectures slurm-jail builds for, by Debian's names, with the
# multiarch triplet that names their library directories (/usr/lib/TRIPLET).
# Needs dpkg only (a plain Debian server has no dpkg-dev, so no
# dpkg-architecture). Sourced; defines functions only.
#
#   multiarch_of ARCH    the triplet of ARCH (amd64, arm64), exit 1 for others
#   host_multiarch       this machine's triplet (x86_64-linux-gnu on amd64)

multiarch_of() {
    case $1 in
        amd64) echo x86_64-linux-gnu ;;
        arm64) echo aarch64-linux-gnu ;;
        *) return 1 ;;
    esac
}

host_multiarch() {
    local arch
    arch=$(dpkg --print-architecture)
    multiarch_of "$arch" || {
        echo "unsupported architecture '$arch' (slurm-jail builds for amd64 and arm64)" >&2
        return 1
    }
}
