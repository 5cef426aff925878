# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# The compiler cache that builds of one Slurm release share: hack/build-release
# (in the release's root) and the build stage of images/build-images (in a
# container of the same Debian suite) compile the same files with the same
# compiler and flags, so the second meets the first's objects in the cache.
#
# Off unless SLURM_JAIL_CCACHE_DIR names a directory (tests/run-all sets it):
# it then holds one ccache directory per release and architecture, since
# the suites' ccache versions differ. What makes two checkouts meet is set
# where ccache runs: CCACHE_BASEDIR (the checkout; its paths are hashed
# relative to it), CCACHE_NOHASHDIR=1 (the build directory is not hashed) and
# CCACHE_COMPILERCHECK=content (the compiler is the same file in the root and
# in the container, whatever its time stamp), and one locale (ccache hashes
# LANG and the LC_* that change the compiler's messages, and the container
# has none of the caller's). Both builds must pass the same flags:
# build-images passes SLURM_JAIL_WERROR on to the build stage.

# compiler_cache_dir RELEASE [ARCH]: the cache directory of that release's
# builds (for ARCH's compiler, default this machine's), made if missing;
# prints nothing when the cache is off.
compiler_cache_dir() {
    [ -n "${SLURM_JAIL_CCACHE_DIR:-}" ] || return 0
    local dir=$SLURM_JAIL_CCACHE_DIR/$1-${2:-$(dpkg --print-architecture)}
    install -d -m 0700 "$dir"
    echo "$dir"
}

# compiler_cache_env DIR BASEDIR: the environment of a build that uses the
# cache in DIR for a checkout at BASEDIR, as NAME=VALUE arguments for env(1).
compiler_cache_env() {
    printf '%s\n' "CCACHE_DIR=$1" "CCACHE_BASEDIR=$2" CCACHE_NOHASHDIR=1 CCACHE_COMPILERCHECK=content \
        LANG=C.UTF-8 LC_ALL=C.UTF-8 LC_CTYPE=C.UTF-8 LC_MESSAGES=C.UTF-8
}
