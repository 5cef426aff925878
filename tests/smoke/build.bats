#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The plugin as shipped: exported symbols, hardening, install location, .deb.

setup() {
    load /usr/lib/bats/bats-support/load.bash
    load /usr/lib/bats/bats-assert/load.bash
    SO=$SLURM_JAIL_BUILD_DIR/plugin/chroot/chroot.so
    JC=$SLURM_JAIL_BUILD_DIR/plugin/job_container/job_container_slurm_jail.so
    PAM_SO=$SLURM_JAIL_BUILD_DIR/plugin/pam/pam_slurm_jail.so
}

@test "chroot.so exports only the SPANK symbols and the job container's one table" {
    run bash -c "nm -D --defined-only '$SO' | awk '{print \$3}' | sort"
    assert_success
    assert_output "plugin_name
plugin_type
plugin_version
sjail_job_container_table
slurm_spank_exit
slurm_spank_init
slurm_spank_init_post_opt
slurm_spank_job_epilog
slurm_spank_slurmd_exit
slurm_spank_task_init_privileged
slurm_spank_task_post_fork
slurm_spank_user_init
spank_plugin_version"
    # job_container/slurm_jail finds it by this name once Slurm loaded it.
    run bash -c "readelf -d '$SO' | grep SONAME"
    assert_output --partial '[chroot.so]'
}

# The job container plugin of this build: job_container_slurm_jail.so up to
# Slurm 25.05, namespace_slurm_jail.so from 25.11 (the same target).
job_container_plugin() {
    local dir=$SLURM_JAIL_BUILD_DIR/plugin/job_container
    if [ -f "$dir/namespace_slurm_jail.so" ]; then echo "$dir/namespace_slurm_jail.so"; else echo "$JC"; fi
}

@test "the job container plugin exports only what the installed Slurm's interface looks up" {
    local so prefix
    so=$(job_container_plugin)
    prefix=container_p_
    [ "${so##*/}" = namespace_slurm_jail.so ] && prefix=namespace_p_
    # The interface's table of names is compiled into slurmd and slurmstepd
    # (up to 24.11) or into libslurm (26.05).
    run bash -c "for f in /usr/sbin/slurmd /usr/sbin/slurmstepd /usr/lib/x86_64-linux-gnu/libslurm.so \
        /usr/lib/x86_64-linux-gnu/slurm-wlm/libslurmfull.so; do strings -a \"\$(realpath \$f)\"; done |
        grep -xE '${prefix}[a-z_]+' | sort -u"
    assert_success
    [ -n "$output" ] || fail "the installed Slurm names no ${prefix}* entry point"
    local wanted=$output
    run bash -c "nm -D --defined-only '$so' | awk '{print \$3}' | sort"
    assert_success
    assert_output "$(printf '%s\n' "$wanted" fini init plugin_name plugin_type plugin_version | sort)"
}

@test "built against Slurm 22.05, job_container_slurm_jail.so exports its nine container_p_ calls" {
    grep -q 'SLURM_VERSION_NUMBER 0x1605' /usr/include/slurm/slurm_version.h ||
        skip "the installed Slurm is not 22.05"
    run bash -c "nm -D --defined-only '$JC' | awk '{print \$3}' | sort"
    assert_success
    assert_output "container_p_add_cont
container_p_create
container_p_delete
container_p_join
container_p_join_external
container_p_reconfig
container_p_restore
container_p_stepd_create
container_p_stepd_delete
fini
init
plugin_name
plugin_type
plugin_version"
}

@test "pam_slurm_jail.so exports only the PAM entry points" {
    run bash -c "nm -D --defined-only '$PAM_SO' | awk '{print \$3}' | sort"
    assert_success
    assert_output "pam_sm_acct_mgmt
pam_sm_close_session
pam_sm_open_session"
}

@test "the plugins and the PAM module are linked with full RELRO and a stack protector" {
    local so
    for so in "$SO" "$JC" "$PAM_SO"; do
        run readelf -d "$so"
        assert_output --partial 'BIND_NOW'
        run readelf -l "$so"
        assert_output --partial 'GNU_RELRO'
        run bash -c "nm -D --undefined-only '$so' | grep -c '__stack_chk_fail'"
        assert_output 1
    done
}

@test "cmake --install puts chroot.so into Slurm's PluginDir and cpack makes a .deb" {
    # The suite's own build (warnings as errors), installed and packaged as
    # it is; a build of the node's parts alone (tests and benchmarks off) is
    # the images' (images/build/Containerfile, the images suite).
    local b=$SLURM_JAIL_BUILD_DIR pkg=$BATS_TEST_TMPDIR/pkg
    DESTDIR=$BATS_TEST_TMPDIR/root run cmake --install "$b"
    assert_success
    assert [ -f "$BATS_TEST_TMPDIR/root/usr/lib/x86_64-linux-gnu/slurm-wlm/chroot.so" ]
    assert [ -f "$BATS_TEST_TMPDIR/root/usr/lib/x86_64-linux-gnu/slurm-wlm/job_container_slurm_jail.so" ]
    assert [ -x "$BATS_TEST_TMPDIR/root/usr/local/sbin/slurm-jail-check" ]
    # PAM's module directory (pkg-config pam's libdir/security)
    assert [ -f "$BATS_TEST_TMPDIR/root/lib/x86_64-linux-gnu/security/pam_slurm_jail.so" ]
    (cd "$BATS_TEST_TMPDIR" && cpack -G DEB --config "$b/CPackConfig.cmake" -B "$pkg" >/dev/null)
    run bash -c "dpkg -c '$pkg'/slurm-jail_*_amd64.deb | awk '{print \$6}'"
    assert_output --partial './usr/lib/x86_64-linux-gnu/slurm-wlm/chroot.so'
    assert_output --partial './usr/lib/x86_64-linux-gnu/slurm-wlm/job_container_slurm_jail.so'
    assert_output --partial './usr/share/man/man8/chroot.so.8'
    assert_output --partial './usr/sbin/slurm-jail-check'
    assert_output --partial './usr/share/man/man8/slurm-jail-check.8'
    assert_output --partial './lib/x86_64-linux-gnu/security/pam_slurm_jail.so'
    assert_output --partial './usr/share/man/man8/pam_slurm_jail.8'
}

@test "the man pages render without warnings" {
    local page
    for page in plugin/chroot/man/chroot.so.8 plugin/jail_check/man/slurm-jail-check.8; do
        run bash -c "MANWIDTH=80 man --warnings -l '$SLURM_JAIL_ROOT/$page' 2>&1 >/dev/null"
        assert_output ''
    done
}

@test "pam_slurm_jail(8) renders without warnings" {
    run bash -c "MANWIDTH=80 man --warnings -l '$SLURM_JAIL_ROOT/plugin/pam/man/pam_slurm_jail.8' 2>&1 >/dev/null"
    assert_success
    assert_output ''
}
