#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# slurm-jail-check against a jail that slurm-jail did not make: a plain
# mmdebstrap minbase rootfs. Every missing piece is listed in one run; after
# images/jail/finalize-rootfs and the plugin copied in, nothing is; planted
# symlinks, user-owned paths and a spool that slurm.conf disagrees with are
# named. Runs in a private mount namespace (a tmpfs on /mnt, /run and
# /var/spool, the test's own /etc/slurm and PluginDir), so the host's files
# are never touched.

bats_require_minimum_version 1.5.0

PLUGIN_DIR=/usr/lib/x86_64-linux-gnu/slurm-wlm
JAIL=/mnt/jail
SJUSER_UID=5301

# Runs a command in the test's mount namespace.
in_ns() { nsenter --target "$(cat "$CHECK_DIR/holder.pid")" --mount -- "$@"; }

check() { in_ns "$SLURM_JAIL_BUILD_DIR/plugin/jail_check/slurm-jail-check" "$@"; }

write_conf() {
    cat >"$CHECK_DIR/etc/slurm.conf" <<CONF
ClusterName=check
SlurmctldHost=localhost
SlurmUser=root
SlurmdSpoolDir=${1:-/var/spool/slurmd}
PlugStackConfig=/etc/slurm/plugstack.conf
CONF
    echo 'required chroot.so jail=/mnt/jail' >"$CHECK_DIR/etc/plugstack.conf"
}

setup_file() {
    CHECK_DIR=$(mktemp -d -p /var/lib slurm-jail-check.XXXXXX)
    export CHECK_DIR
    chmod 0755 "$CHECK_DIR"
    # shellcheck source=hack/lib/mmdebstrap.sh
    . "$SLURM_JAIL_ROOT/hack/lib/mmdebstrap.sh"
    run_mmdebstrap check.bats --variant=minbase --format=tar bookworm "$CHECK_DIR/plain.tar"
    mkdir -p "$CHECK_DIR/etc" "$CHECK_DIR/plugins"
    cp -a "$PLUGIN_DIR/." "$CHECK_DIR/plugins/"
    install -m 0755 "$SLURM_JAIL_BUILD_DIR/plugin/chroot/chroot.so" "$CHECK_DIR/plugins/chroot.so"
    write_conf
    unshare --mount --propagation private sleep infinity 3>&- &
    echo $! >"$CHECK_DIR/holder.pid"
    sleep 0.2
    in_ns mount -t tmpfs -o mode=0755 sjcheck-mnt /mnt
    in_ns mount -t tmpfs -o mode=0755 sjcheck-run /run
    in_ns install -d -m 0755 /run/munge
    in_ns mount -t tmpfs -o mode=0755 sjcheck-spool /var/spool
    in_ns install -d -m 0755 /var/spool/slurmd
    in_ns mount --bind "$CHECK_DIR/etc" /etc/slurm
    in_ns mount --bind "$CHECK_DIR/plugins" "$PLUGIN_DIR"
}

teardown_file() {
    [ -n "${CHECK_DIR:-}" ] || return 0
    kill "$(cat "$CHECK_DIR/holder.pid")" 2>/dev/null || true
    rm -rf "$CHECK_DIR"
}

setup() {
    load /usr/lib/bats/bats-support/load.bash
    load /usr/lib/bats/bats-assert/load.bash
}

plain_jail() {
    in_ns rm -rf "$JAIL"
    in_ns install -d -m 0755 "$JAIL"
    in_ns tar -C "$JAIL" --numeric-owner -xpf "$CHECK_DIR/plain.tar"
}

# What an admin does after reading the first report.
fixed_jail() {
    plain_jail
    in_ns install -m 0755 "$SLURM_JAIL_ROOT/images/jail/finalize-rootfs" "$JAIL/finalize-rootfs"
    in_ns chroot "$JAIL" /finalize-rootfs 0.0-check >/dev/null
    in_ns rm "$JAIL/finalize-rootfs"
    in_ns install -D -m 0755 "$SLURM_JAIL_BUILD_DIR/plugin/chroot/chroot.so" "$JAIL$PLUGIN_DIR/chroot.so"
}

@test "a plain mmdebstrap jail: every missing piece is listed in one run, each with its fix" {
    plain_jail
    run check
    assert_failure 1
    # run=node (the default): the plugin makes /run/munge in the node's own /run.
    refute_line --regexp '^PROBLEM: .*/run/munge'
    assert_line --regexp '^PROBLEM: mount point /etc/slurm is missing inside the jail.* -- fix: .*mkdir -p /mnt/jail/etc/slurm'
    assert_line --regexp '^PROBLEM: mount point /var/spool/slurmd is missing inside the jail.* -- fix: .*mkdir -p /mnt/jail/var/spool/slurmd'
    assert_line --regexp "^PROBLEM: chroot.so is not in the jail .* -- fix: copy the plugin into the jail: install -m 0755 $PLUGIN_DIR/chroot.so /mnt/jail$PLUGIN_DIR/chroot.so"
    assert_line --regexp '^WARNING: the jail has no /usr/bin/srun'
    # One line per finding, then the summary with the count.
    local problems
    problems=$(grep -c '^PROBLEM: ' <<<"$output")
    [ "$problems" -ge 3 ]
    assert_line --regexp "^$problems problems, [0-9]+ warnings?$"
    refute_line --regexp '^(PROBLEM|WARNING): .*/proc '
    # The jail's own /run needs its mount points.
    run check --line 'chroot.so jail=/mnt/jail run=jail'
    assert_failure 1
    assert_line --regexp '^PROBLEM: mount point /run/munge is missing inside the jail.* -- fix: create it as a root-owned directory: mkdir -p /mnt/jail/run/munge; chown root:root /mnt/jail/run/munge'
    assert_line --regexp "^$((problems + 1)) problems, [0-9]+ warnings?$"
    # Nothing was changed: the jail is still the plain one.
    run in_ns test -e "$JAIL/run/munge"
    assert_failure
}

@test "after finalize-rootfs and the plugin copied in, no problems and exit 0" {
    fixed_jail
    run check
    assert_success
    refute_line --partial 'PROBLEM:'
    assert_line --regexp '^no problems found'
    # The same through --line and --json.
    run check --line 'chroot.so jail=/mnt/jail' --json
    assert_success
    assert_output --partial '"summary": "no problems found'
}

@test "the chroot.so line in plugstack.conf.d/ (include plugstack.conf.d/*) is found" {
    fixed_jail
    install -d -m 0755 "$CHECK_DIR/etc/plugstack.conf.d"
    echo 'include plugstack.conf.d/*' >"$CHECK_DIR/etc/plugstack.conf"
    run check
    assert_failure 1
    assert_line 'PROBLEM: /etc/slurm/plugstack.conf has no chroot.so line (include lines that match no file: /etc/slurm/plugstack.conf:1: include /etc/slurm/plugstack.conf.d/*) -- fix: add the line: required chroot.so jail=/mnt/jail'
    echo 'required chroot.so jail=/mnt/jail' >"$CHECK_DIR/etc/plugstack.conf.d/50-chroot.conf"
    run check
    assert_success
    refute_line --partial 'PROBLEM:'
    assert_line --regexp '^no problems found'
    # A file the include matches that a user owns: pam_slurm_jail refuses logins.
    chown "$SJUSER_UID" "$CHECK_DIR/etc/plugstack.conf.d/50-chroot.conf"
    run check
    rm -rf "$CHECK_DIR/etc/plugstack.conf.d"
    write_conf
    assert_failure 1
    assert_line "PROBLEM: /etc/slurm/plugstack.conf.d/50-chroot.conf (included by /etc/slurm/plugstack.conf:1) is owned by uid $SJUSER_UID; plugstack.conf and the files it includes must be owned by root and not writable by group or others -- fix: chown root: /etc/slurm/plugstack.conf.d/50-chroot.conf; chmod go-w /etc/slurm/plugstack.conf.d/50-chroot.conf"
}

@test "a planted symlink at a mount point and user-owned jail paths are each named" {
    fixed_jail
    in_ns rmdir "$JAIL/var/spool/slurmd"
    in_ns ln -s /tmp "$JAIL/var/spool/slurmd"
    in_ns chown "$SJUSER_UID" "$JAIL/run"
    in_ns chown "$SJUSER_UID" "$JAIL/etc/nsswitch.conf"
    run check
    assert_failure 1
    assert_line --regexp '^PROBLEM: jail path /var/spool/slurmd is a symlink.* -- fix: replace the symlink in the jail by a real root-owned directory'
    assert_line --regexp "^PROBLEM: mount point /run inside the jail is owned by uid $SJUSER_UID, not root -- fix: chown root:root /mnt/jail/run"
    refute_line --regexp '^PROBLEM: .*/run/munge'
    assert_line --regexp "^PROBLEM: jail /mnt/jail: root processes on the node read /etc/nsswitch.conf .* -- fix: chown root:root /mnt/jail/etc/nsswitch.conf; chmod go-w /mnt/jail/etc/nsswitch.conf"
    assert_line --regexp '^3 problems'
    # With the jail's own /run, the way to /run/munge is what users control.
    run check --line 'chroot.so jail=/mnt/jail run=jail'
    assert_failure 1
    assert_line --regexp '^PROBLEM: refusing to mount /run/munge through a path users control: .*/run.* -- fix: make every directory above /mnt/jail/run/munge owned by root'
    assert_line --regexp '^3 problems'
}

@test "a mount point owned by a user and a user-owned jail parent are problems" {
    fixed_jail
    in_ns chown "$SJUSER_UID" "$JAIL/etc/slurm"
    run check
    assert_failure 1
    assert_line "PROBLEM: mount point /etc/slurm inside the jail is owned by uid $SJUSER_UID, not root -- fix: chown root:root /mnt/jail/etc/slurm"
    # The jail's own path: the checks inside still run.
    in_ns chown "$SJUSER_UID" /mnt
    run check
    in_ns chown root /mnt
    assert_failure 1
    assert_line --regexp '^PROBLEM: jail /mnt/jail: .*/mnt.* -- fix: make /mnt/jail and every directory above it'
    assert_line --partial "mount point /etc/slurm inside the jail is owned by uid $SJUSER_UID"
}

@test "spool= that slurm.conf's SlurmdSpoolDir disagrees with is named" {
    fixed_jail
    write_conf /var/spool/slurm/d
    run check
    write_conf
    assert_failure 1
    assert_line 'PROBLEM: spool=/var/spool/slurmd but slurm.conf (/etc/slurm/slurm.conf) has SlurmdSpoolDir=/var/spool/slurm/d: batch scripts live there and would be missing inside the jail -- fix: set spool=/var/spool/slurm/d in the chroot.so line'
    assert_line --regexp '^1 problem(, [0-9]+ warnings?)?$'
}

@test "a missing jail, a bad setting and bad usage are clear" {
    run check --line 'chroot.so jail=/mnt/nojail'
    assert_failure 1
    assert_line --regexp '^PROBLEM: jail /mnt/nojail: .*No such file or directory -- fix: point jail= at'
    run check --line 'chroot.so jail=/mnt/jail colour=blue'
    assert_failure 1
    assert_line --regexp '^PROBLEM: --line: .*colour'
    run check --no-such-option
    assert_failure 2
    run check --line 'include /x/*.conf'
    assert_failure 2
    assert_output --partial 'include line loads no plugin'
    echo '# nothing here' >"$CHECK_DIR/etc/empty.conf"
    run check --plugstack /etc/slurm/empty.conf
    assert_failure 1
    assert_line 'PROBLEM: /etc/slurm/empty.conf has no chroot.so line -- fix: add the line: required chroot.so jail=/mnt/jail'
}

# A GPU node whose /sbin/ldconfig is Ubuntu's shell wrapper: the plugin runs
# only the ELF program beside it (ldconfig.real), so a node without that is
# a problem, named with the fix; with it, nothing is said of ldconfig.
@test "a GPU node whose ldconfig is Ubuntu's wrapper without ldconfig.real: a problem with the fix" {
    fixed_jail
    local fake=$SLURM_JAIL_BUILD_DIR/tests/fakes/nvidia-driver/550.54.15 sbin
    sbin=$(readlink -f /sbin)
    in_ns install -d -m 0755 /run/nvidia-fake "$CHECK_DIR/sbin"
    in_ns cp -a "$fake/." /run/nvidia-fake/
    printf '#!/bin/sh\nexec %s/ldconfig.real "$@"\n' "$sbin" >"$CHECK_DIR/sbin/ldconfig"
    chmod 0755 "$CHECK_DIR/sbin/ldconfig"
    in_ns mount --bind "$CHECK_DIR/sbin" "$sbin"
    local line='chroot.so jail=/mnt/jail gpu=on gpu_driver_root=/run/nvidia-fake'
    run check --line "$line"
    assert_failure 1
    assert_line --regexp "^PROBLEM: gpu=on: every GPU node's step builds its loader cache with /sbin/ldconfig, and the node's ldconfig $sbin/ldconfig is a script .* -- fix: reinstall the node's libc-bin"
    # As Ubuntu has it: the ELF program beside the wrapper (this machine's
    # own ldconfig, copied in from outside the test's namespace).
    cp /sbin/ldconfig "$CHECK_DIR/sbin/ldconfig.real"
    run check --line "$line"
    refute_line --partial 'ldconfig'
    in_ns umount "$sbin"
}
