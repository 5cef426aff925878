# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# The build type of a tree that tests/run-all and the local cluster build in
# turn (build/, build-RELEASE): the one the tree was configured with, so that
# neither rebuilds what the other built (a developer's Debug or RelWithDebInfo
# is kept), else Release: no debug info, so about a quarter less compile time
# than RelWithDebInfo. Sourced; defines functions only.
#
#   tree_build_type DIR    the CMAKE_BUILD_TYPE of the tree in DIR, or Release

tree_build_type() {
    local type
    type=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$1/CMakeCache.txt" 2>/dev/null || true)
    echo "${type:-Release}"
}
