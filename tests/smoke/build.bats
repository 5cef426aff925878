#!/usr/bin/env bats
# The plugin as shipped: exported symbols, hardening, install location, .deb.

setup() {
    load /usr/lib/bats/bats-support/load.bash
    load /usr/lib/bats/bats-assert/load.bash
    SO=$SLURM_JAIL_BUILD_DIR/plugin/chroot/chroot.so
}

@test "chroot.so exports only the SPANK symbols" {
    run bash -c "nm -D --defined-only '$SO' | awk '{print \$3}' | sort"
    assert_success
    assert_output "plugin_name
plugin_type
plugin_version
slurm_spank_init
slurm_spank_init_post_opt
slurm_spank_slurmd_exit
slurm_spank_task_init_privileged
spank_plugin_version"
}

@test "chroot.so is linked with full RELRO and a stack protector" {
    run readelf -d "$SO"
    assert_output --partial 'BIND_NOW'
    run readelf -l "$SO"
    assert_output --partial 'GNU_RELRO'
    run bash -c "nm -D --undefined-only '$SO' | grep -c '__stack_chk_fail'"
    assert_output 1
}

@test "cmake --install puts chroot.so into Slurm's PluginDir and cpack makes a .deb" {
    local b=$BATS_TEST_TMPDIR/b
    cmake -S "$SLURM_JAIL_ROOT" -B "$b" -DSLURM_JAIL_BUILD_TESTS=OFF -DSLURM_JAIL_BUILD_BENCH=OFF \
        -DSLURM_JAIL_BUILD_HEALTH=OFF >/dev/null
    cmake --build "$b" --target chroot -j 2 >/dev/null
    DESTDIR=$BATS_TEST_TMPDIR/root run cmake --install "$b"
    assert_success
    assert [ -f "$BATS_TEST_TMPDIR/root/usr/lib/x86_64-linux-gnu/slurm-wlm/chroot.so" ]
    (cd "$b" && cpack -G DEB >/dev/null)
    run bash -c "dpkg -c '$b'/slurm-jail_*_amd64.deb | awk '{print \$6}'"
    assert_output --partial './usr/lib/x86_64-linux-gnu/slurm-wlm/chroot.so'
    assert_output --partial './usr/share/man/man8/chroot.so.8'
}

@test "the man page renders without warnings" {
    run bash -c "MANWIDTH=80 man --warnings -l '$SLURM_JAIL_ROOT/plugin/chroot/man/chroot.so.8' 2>&1 >/dev/null"
    assert_output ''
}
