#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2154 # $images comes from helpers.bash
# The jail's enroot GPU hook (images/jail/enroot/hooks.d/50-slurm-jail-nvidia.sh)
# without enroot, Slurm or a GPU: it runs as an unprivileged user (nobody),
# as enroot runs it, in a mount namespace of its own where a fake node is
# bound over the paths it reads: /dev (character devices made with mknod),
# /usr/local/nvidia (a driver tree) and /proc/driver (the kernel module's GPU
# table). What it asks enroot to mount (ENROOT_MOUNTS) and to set in the
# container (ENROOT_ENVIRON) is checked line by line.

load helpers

uuid0=GPU-0a1b2c3d-0000-1111-2222-333344445555
uuid3=GPU-9f8e7d6c-aaaa-bbbb-cccc-ddddeeeeffff

setup() {
    [ "$(id -u)" -eq 0 ] || skip "needs root (mknod, mount namespaces)"
    hook=$images/jail/enroot/hooks.d/50-slurm-jail-nvidia.sh
    # Below /tmp, open to nobody (BATS_TEST_TMPDIR's parents are not).
    W=$(mktemp -d /tmp/sjail-enroot-hook.XXXXXX)
    chmod 0755 "$W"
    install -m 0755 "$hook" "$W/50-slurm-jail-nvidia.sh"

    # A node with GPUs 0, 1 and 3, the control device and UVM (no
    # nvidia-uvm-tools, no nvidia-modeset), and two look-alikes that are no
    # GPU: a symlink and a regular file.
    mkdir "$W/dev"
    mknod -m 0666 "$W/dev/null" c 1 3
    for n in 0 1 3; do mknod -m 0666 "$W/dev/nvidia$n" c 195 "$n"; done
    mknod -m 0666 "$W/dev/nvidiactl" c 195 255
    mknod -m 0666 "$W/dev/nvidia-uvm" c 510 0
    ln -s nvidia0 "$W/dev/nvidia7"
    touch "$W/dev/nvidia8"

    mkdir -p "$W/nvidia/lib64" "$W/nvidia/bin"
    touch "$W/nvidia/lib64/libcuda.so.1" "$W/nvidia/bin/nvidia-smi"

    # /proc/driver/nvidia/gpus/BUS/information, as the kernel module writes it
    # (driver 580.159.04 on an H200).
    gpu_info "0000:18:00.0" "$uuid0" 0
    gpu_info "0000:2a:00.0" GPU-11111111-2222-3333-4444-555555555555 1
    gpu_info "0000:ab:00.0" "$uuid3" 3

    mkdir -p "$W/rootfs" "$W/etc/hooks.d"
    # The container's environment so far: the image's, as enroot writes it.
    printf '%s\n' 'PATH=/opt/conda/bin:/usr/bin:/bin' 'LD_LIBRARY_PATH=/opt/lib' 'HOME=/root' >"$W/environ"
    : >"$W/fstab"
    chmod 0666 "$W/environ" "$W/fstab"
}

teardown() {
    if [ -n "${W:-}" ]; then rm -rf "$W"; fi
}

# gpu_info BUS UUID MINOR
gpu_info() {
    mkdir -p "$W/driver/nvidia/gpus/$1"
    printf 'Model: \t\t NVIDIA H200\nIRQ:   \t\t 42\nGPU UUID: \t %s\nVideo BIOS: \t 96.00.99.00.01\nBus Type: \t PCIe\nDMA Size: \t 52 bits\nDMA Mask: \t 0xfffffffffffff\nBus Location: \t %s\nDevice Minor: \t %s\nGPU Firmware: \t 580.159.04\nGPU Excluded:\t No\n' \
        "$2" "$1" "$3" >"$W/driver/nvidia/gpus/$1/information"
}

# run_hook [VAR=VALUE...]: runs the hook as nobody with enroot's variables
# and VAR=VALUE, nothing else of this environment, the fake node bound over
# /dev, /usr/local/nvidia (empty when $W/nvidia is missing) and /proc/driver.
run_hook() {
    run unshare --mount --propagation private -- bash -euc '
        W=$1; shift
        mount --bind "$W/dev" /dev
        mount -t tmpfs -o mode=0755 tmpfs /usr/local
        mkdir /usr/local/nvidia
        if [ -d "$W/nvidia" ]; then mount --bind "$W/nvidia" /usr/local/nvidia; fi
        mount --bind "$W/driver" /proc/driver
        exec setpriv --reuid=65534 --regid=65534 --clear-groups -- env -i PATH=/usr/bin:/bin \
            ENROOT_ROOTFS="$W/rootfs" ENROOT_MOUNTS="$W/fstab" ENROOT_ENVIRON="$W/environ" \
            ENROOT_SYSCONF_PATH="$W/etc" "$@" "$W/50-slurm-jail-nvidia.sh"' _ "$W" "$@"
}

# The lines the hook appended to the container's environment.
added_env() { tail -n +4 "$W/environ"; }

driver_line='/usr/local/nvidia /usr/local/nvidia none x-create=dir,rbind,ro,nosuid,nodev,private'
dev_line() { echo "/dev/$1 /dev/$1 none x-create=file,bind,ro,nosuid,noexec,private"; }

@test "enroot hook: all: the driver tree, the control devices and every GPU of the job's /dev; the loader and PATH" {
    run_hook NVIDIA_VISIBLE_DEVICES=all
    assert_success
    assert_output ""
    run cat "$W/fstab"
    assert_output "$driver_line
$(dev_line nvidiactl)
$(dev_line nvidia-uvm)
$(dev_line nvidia0)
$(dev_line nvidia1)
$(dev_line nvidia3)"
    run added_env
    assert_output "LD_LIBRARY_PATH=/opt/lib:/usr/local/nvidia/lib64
PATH=/opt/conda/bin:/usr/bin:/bin:/usr/local/nvidia/bin"
    # Nothing below the container's root is touched by the hook itself.
    run ls -A "$W/rootfs"
    assert_output ""
}

@test "enroot hook: indexes select /dev/nvidiaN, blanks and repeats allowed" {
    run_hook NVIDIA_VISIBLE_DEVICES=' 3, 1,3,01'
    assert_success
    run grep '/dev/nvidia[0-9]' "$W/fstab"
    assert_output "$(dev_line nvidia3)
$(dev_line nvidia1)"
    run grep -c nvidiactl "$W/fstab"
    assert_output 1
}

@test "enroot hook: GPU UUIDs select through the kernel module's table, mixed with indexes, any case" {
    run_hook NVIDIA_VISIBLE_DEVICES="${uuid3^^},0"
    assert_success
    run grep '/dev/nvidia[0-9]' "$W/fstab"
    assert_output "$(dev_line nvidia3)
$(dev_line nvidia0)"

    : >"$W/fstab"
    run_hook NVIDIA_VISIBLE_DEVICES=GPU-00000000-0000-0000-0000-000000000000
    assert_failure
    assert_output --partial "no GPU of this node has the UUID GPU-00000000-0000-0000-0000-000000000000"
    run cat "$W/fstab"
    assert_output ""
}

@test "enroot hook: none: the driver and the control devices, no GPU" {
    run_hook NVIDIA_VISIBLE_DEVICES=' none '
    assert_success
    run cat "$W/fstab"
    assert_output "$driver_line
$(dev_line nvidiactl)
$(dev_line nvidia-uvm)"
    run added_env
    assert_line --index 0 "LD_LIBRARY_PATH=/opt/lib:/usr/local/nvidia/lib64"
}

@test "enroot hook: unset, empty or void: nothing at all" {
    local v
    for v in NVIDIA_VISIBLE_DEVICES= NVIDIA_VISIBLE_DEVICES=void ""; do
        run_hook ${v:+"$v"}
        assert_success
        assert_output ""
        run cat "$W/fstab"
        assert_output ""
        run added_env
        assert_output ""
    done
}

@test "enroot hook: the variable comes from enroot's environment first, else the container's last value" {
    # An image that sets NVIDIA_VISIBLE_DEVICES=all (as CUDA images do),
    # overridden by `enroot start -e` (a later line).
    printf '%s\n' NVIDIA_VISIBLE_DEVICES=all NVIDIA_VISIBLE_DEVICES=1 >>"$W/environ"
    run_hook
    assert_success
    run grep '/dev/nvidia[0-9]' "$W/fstab"
    assert_output "$(dev_line nvidia1)"

    # The job's own environment (what pyxis passes) wins, even when empty.
    : >"$W/fstab"
    run_hook NVIDIA_VISIBLE_DEVICES=
    assert_success
    run cat "$W/fstab"
    assert_output ""
}

@test "enroot hook: the loader path and PATH are kept when they hold the driver already; a missing PATH gets the usual one" {
    printf '%s\n' LD_LIBRARY_PATH=/usr/local/cuda/compat:/usr/local/nvidia/lib64:/usr/local/nvidia/lib >"$W/environ"
    printf '%s\n' X=1 X=2 >>"$W/environ"
    run_hook NVIDIA_VISIBLE_DEVICES=all
    assert_success
    run tail -n 2 "$W/environ"
    assert_output "LD_LIBRARY_PATH=/usr/local/cuda/compat:/usr/local/nvidia/lib64:/usr/local/nvidia/lib
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/usr/local/nvidia/bin"
}

@test "enroot hook: junk in NVIDIA_VISIBLE_DEVICES is refused, naming the variable and the fix, and nothing is mounted" {
    local v
    for v in '../../etc' '0 /etc/shadow none bind' '/dev/sda' '0;id' '$(id)' 'all,0' 'ALL' '0,,1' '1,' \
        'nvidia0' '1234' 'GPU-123' "0"$'\n'"/etc /x none rbind" 'MIG-0a1b2c3d-0000-1111-2222-333344445555' '0:1'; do
        run_hook NVIDIA_VISIBLE_DEVICES="$v"
        assert_failure
        assert_output --partial "50-slurm-jail-nvidia.sh: NVIDIA_VISIBLE_DEVICES="
        assert_output --partial "set NVIDIA_VISIBLE_DEVICES to all, none, void, or a comma-separated list"
        run cat "$W/fstab"
        assert_output ""
        run added_env
        assert_output ""
    done
}

@test "enroot hook: a GPU the job's /dev lacks is an error; symlinks and files named like GPUs are no GPU" {
    local n
    for n in 2 7 8; do
        run_hook NVIDIA_VISIBLE_DEVICES="0,$n"
        assert_failure
        assert_output --partial "GPU $n: the job's /dev has no /dev/nvidia$n (it has: 0 1 3)"
        run cat "$W/fstab"
        assert_output ""
    done
}

@test "enroot hook: on a node without a driver the container gets none, and says so" {
    rm -rf "$W/nvidia"
    run_hook NVIDIA_VISIBLE_DEVICES=all
    assert_success
    assert_output "50-slurm-jail-nvidia.sh: no NVIDIA driver in this job's view (/usr/local/nvidia/lib64): the container gets no GPU"
    run cat "$W/fstab"
    assert_output ""
    run added_env
    assert_output ""
}

@test "enroot hook: refuses to run beside enroot's own 98-nvidia.sh" {
    install -m 0755 /dev/null "$W/etc/hooks.d/98-nvidia.sh"
    run_hook NVIDIA_VISIBLE_DEVICES=all
    assert_failure
    assert_output --partial "98-nvidia.sh is installed too; the jail must not ship it"
    run cat "$W/fstab"
    assert_output ""
}
