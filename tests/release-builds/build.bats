#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The tree against the other Slurm releases it supports (hack/lib/slurm-releases.sh),
# each in its own Debian root (hack/release-rootfs) with that release's
# compiler: it builds in Release with warnings as errors, its pure unit tests
# pass there, the job container plugin offers exactly the entry points that
# release's libslurm looks up, and cpack makes that release's .deb.
# The first run makes the roots (minutes each); later runs reuse them. So
# does the compat suite: its clusters on these releases find the roots, the
# build directories and the jails' rootfs made here (tests/run-all starts
# compat after this suite when both run).

load ../lib/file_build

releases=(24.11 26.05)

# What setup_file builds: what the .deb ships and the `unit`-labelled suites.
targets=(chroot job_container_slurm_jail slurm-jail-check pam_slurm_jail
    unit_tests jail_check_unit_tests pam_unit_tests gpu_unit_tests job_container_table_tests)

setup_file() {
    # shellcheck source=tests/lib/local_cluster.bash
    . "$SLURM_JAIL_ROOT/tests/lib/local_cluster.bash"
    exec 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- # mmdebstrap's apt breaks on bats's open fds
    [ "$(id -u)" -eq 0 ] || return 0        # the tests say why they skip
    local rel
    # The releases build side by side: one's root is downloaded and unpacked
    # while the other compiles. Their jails' rootfs too, which
    # e2e-releases.bats's 'local-cluster up --slurm REL' then finds cached.
    for rel in "${releases[@]}"; do
        (
            local args
            mapfile -t args < <(lc_call jail_rootfs_args "$rel")
            "$SLURM_JAIL_ROOT/hack/jail-rootfs" "${args[@]}" >"$BATS_FILE_TMPDIR/jail-$rel.log" 2>&1 ||
                echo "hack/jail-rootfs ${args[*]} failed; local-cluster up --slurm $rel builds it again" >>"$BATS_FILE_TMPDIR/jail-$rel.log"
        ) &
    done
    for rel in "${releases[@]}"; do
        # The release's own build directory (build-REL), away from the
        # host's build: the one 'local-cluster up --slurm REL' then builds
        # its plugins in (e2e-releases.bats), so each release compiles once.
        record_build "build-$rel" "building against Slurm $rel" \
            "$SLURM_JAIL_ROOT/hack/build-release" "$rel" Release \
            -DSLURM_JAIL_BUILD_BENCH=OFF -DSLURM_JAIL_BUILD_HEALTH=OFF \
            -DCMAKE_SKIP_INSTALL_ALL_DEPENDENCY=ON -- --target "${targets[@]}" &
    done
    wait
}

setup() {
    load /usr/lib/bats/bats-support/load.bash
    load /usr/lib/bats/bats-assert/load.bash
    [ "$(id -u)" -eq 0 ] || skip "needs root (a mount namespace per release root)"
}

build_dir() { echo "$SLURM_JAIL_BUILD_DIR-$1"; }

in_release() { # REL CMD...: CMD in that release's root, with the checkout and build bound
    local rel=$1
    shift
    "$SLURM_JAIL_ROOT/hack/in-release" "$rel" --bind "$SLURM_JAIL_ROOT" --bind "$(build_dir "$rel")" -- "$@"
}

check_unit_tests() { # REL
    assert_built "build-$1"
    # shellcheck disable=SC2016 # the inner sh expands its own arguments
    run in_release "$1" sh -c 'cd "$1" && ctest -L unit -j "$(nproc)" --output-on-failure' sh "$(build_dir "$1")"
    # Every labelled suite ran: none was left unbuilt.
    assert_ctest_passed 100
}

# REL PREFIX FILE TYPE: the plugin exports plugin_*, init, fini and exactly
# the PREFIX* names of REL's interface table, and names itself TYPE. The table
# is compiled into slurmd and slurmstepd (24.11) or into libslurm (26.05):
# its names are read from all of them, in REL's root.
check_interface() {
    local rel=$1 prefix=$2 file=$3 type=$4 b
    assert_built "build-$rel"
    b=$(build_dir "$rel")
    [ -f "$b/plugin/job_container/$file" ] || fail "no $file in $b/plugin/job_container"
    # shellcheck disable=SC2016
    run in_release "$rel" sh -c 'for f in /usr/sbin/slurmd /usr/sbin/slurmstepd \
            /usr/lib/x86_64-linux-gnu/libslurm.so /usr/lib/x86_64-linux-gnu/slurm-wlm/libslurmfull.so; do
            strings -a "$(realpath "$f")"; done | grep -xE "$1[a-z_]+" | sort -u' sh "$prefix"
    assert_success
    local wanted=$output
    [ -n "$wanted" ] || fail "Slurm $rel names no $prefix* entry point"
    run bash -c "nm -D --defined-only '$b/plugin/job_container/$file' | awk '{print \$3}' | sort"
    assert_success
    assert_output "$(printf '%s\n' "$wanted" fini init plugin_name plugin_type plugin_version | sort)"
    run strings -a "$b/plugin/job_container/$file"
    assert_line "$type"
}

check_deb() { # REL LIBSLURM_PACKAGE
    local rel=$1 lib=$2 b deb
    assert_built "build-$rel"
    b=$(build_dir "$rel")
    rm -f "$b"/slurm-jail_*.deb
    # shellcheck disable=SC2016
    run in_release "$rel" sh -c 'cd "$1" && cpack -G DEB' sh "$b"
    assert_success
    deb=$b/slurm-jail_0.1.0+slurm${rel}_amd64.deb
    [ -f "$deb" ] || fail "cpack made $(ls "$b"/*.deb 2>/dev/null), not $deb"
    run dpkg-deb -f "$deb" Package Version Depends
    assert_success
    local next
    next=${rel%.*}.$(printf '%02d' $((10#${rel#*.} + 1)))~
    assert_output "Package: slurm-jail
Version: 0.1.0+slurm$rel
Depends: slurmd (>= $rel), slurmd (<< $next), $lib, libpam0g"
    # The package the release's libslurm really comes from.
    # shellcheck disable=SC2016
    run in_release "$rel" sh -c 'dpkg-query -S "$(realpath /usr/lib/x86_64-linux-gnu/libslurm.so)"' 
    assert_output --regexp "^$lib:"
    run bash -c "dpkg-deb -c '$deb' | awk '{print \$6}'"
    assert_line ./usr/lib/x86_64-linux-gnu/slurm-wlm/chroot.so
    assert_line "./usr/lib/x86_64-linux-gnu/slurm-wlm/$3"
}

@test "Slurm 24.11 (Debian 13, GCC 14): the pure unit tests pass, built in Release with -Werror" {
    check_unit_tests 24.11
}

@test "Slurm 24.11: job_container_slurm_jail.so offers exactly the container_p_* calls Slurm 24.11 looks up" {
    check_interface 24.11 container_p_ job_container_slurm_jail.so job_container/slurm_jail
}

@test "Slurm 24.11: cpack makes slurm-jail_0.1.0+slurm24.11_amd64.deb for Slurm 24.11 only" {
    check_deb 24.11 libslurm42t64 job_container_slurm_jail.so
}

@test "Slurm 26.05 (Debian unstable, GCC 16): the pure unit tests pass, built in Release with -Werror" {
    check_unit_tests 26.05
}

@test "Slurm 26.05: namespace_slurm_jail.so offers exactly the namespace_p_* calls Slurm 26.05 looks up" {
    check_interface 26.05 namespace_p_ namespace_slurm_jail.so namespace/slurm_jail
    # No job_container plugin left from another configuration.
    run nm -D --defined-only "$(build_dir 26.05)/plugin/job_container/namespace_slurm_jail.so"
    refute_output --partial container_p_
}

@test "Slurm 26.05: cpack makes slurm-jail_0.1.0+slurm26.05_amd64.deb for Slurm 26.05 only" {
    check_deb 26.05 libslurm45t64 namespace_slurm_jail.so
}
