# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# The Slurm releases slurm-jail supports, each with the Debian suite that
# ships it. Sourced by hack/release-rootfs, hack/jail-rootfs, hack/local-cluster
# and the tests; defines settings and functions only.
#
#   release_suite REL      the Debian suite that ships Slurm REL
#   release_apt_options    extra apt options for that suite, one per line
#   release_check REL      exit 1 (with the list) unless REL is supported
#   host_release           the Slurm release installed on this machine, or nothing
#   suite_release          the Slurm release this machine's Debian suite ships, or nothing
#   default_release        host_release, else suite_release: what 'up' runs
#   release_at_least REL MIN  REL (major.minor) is MIN or later

# Oldest first. 22.05: Debian 12 (bookworm), 24.11: Debian 13 (trixie),
# 26.05: Debian unstable (sid).
# shellcheck disable=SC2034 # used by the scripts that source this file
SLURM_JAIL_RELEASES=(22.05 24.11 26.05)
# The release the images are built for and the chart runs when none is named:
# Debian stable's (13, trixie). helm/slurm-cluster/values.yaml's slurm.release
# default is the same (tests/helm/images.bats checks it).
# shellcheck disable=SC2034 # used by the scripts that source this file
SLURM_JAIL_DEFAULT_RELEASE=24.11

release_suite() {
    case $1 in
        22.05) echo bookworm ;;
        24.11) echo trixie ;;
        26.05) echo sid ;;
        *) return 1 ;;
    esac
}

# The mirror is a dated snapshot: unstable's Release file has expired there,
# and apt refuses an expired one unless told not to check.
release_apt_options() {
    case $1 in
        26.05) echo 'Acquire::Check-Valid-Until "false"' ;;
        *) ;;
    esac
}

release_check() {
    release_suite "$1" >/dev/null && return 0
    echo "unknown Slurm release '$1'; supported: ${SLURM_JAIL_RELEASES[*]}" >&2
    return 1
}

# The major.minor of the Slurm installed here (slurmd, else libslurm-dev's
# header), or nothing (a fresh machine: dpkg-query prints an empty version
# for a package it knows of but has not installed).
host_release() {
    local v
    v=$(dpkg-query -W -f='${Version}' slurmd 2>/dev/null ||
        dpkg-query -W -f='${Version}' libslurm-dev 2>/dev/null) || return 0
    if [[ $v =~ ^([0-9]+\.[0-9]+) ]]; then echo "${BASH_REMATCH[1]}"; fi
}

# The release whose Debian suite this machine runs (its /etc/os-release), or
# nothing on another distribution or suite.
suite_release() {
    local codename rel
    codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
    for rel in "${SLURM_JAIL_RELEASES[@]}"; do
        if [ -n "$codename" ] && [ "$(release_suite "$rel")" = "$codename" ]; then echo "$rel"; fi
    done
}

# The release a local cluster runs when none is named: the installed one, else
# the one 'hack/install-deps' installs from this machine's suite.
default_release() {
    local rel
    rel=$(host_release)
    if [ -n "$rel" ]; then echo "$rel"; else suite_release; fi
}

# release_at_least REL MIN: REL (major.minor) is MIN or later.
release_at_least() {
    [ "$(printf '%s\n' "$2" "$1" | sort -V | head -1)" = "$2" ]
}
