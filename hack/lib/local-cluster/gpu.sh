# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Fake NVIDIA drivers for 'up --fake-gpu': GPU nodes on a machine without GPUs.
#
# Each node gets its own driver (user-space libraries libcuda, libnvidia-ml,
# libnvidia-ptxjitcompiler and nvidia-smi, built from tests/fakes/nvidia-driver)
# in $LC_STATE/nodes/NODE/nvidia, laid out as the NVIDIA container toolkit lays
# a driver out (lib64/, bin/). ns-init binds it at /usr/local/nvidia in that
# node's mount namespace only, one of the places where chroot.so's gpu=auto
# looks. Nodes take the versions of LC_FAKE_DRIVERS in turn, so neighbours
# differ. The jail gets what the jail image has for the NCCL checks
# (slurm-jail-nccl-check, slurm-jail-nccl-fabric, libfmt9) and an
# all_reduce_perf stand-in that, like the real one, needs the node's driver.

LC_FAKE_DRIVERS=(550.54.15 570.124.06)
LC_FAKE_DRIVER_ALL=(550.54.15 570.124.06 580.159.04)
LC_ARP=/usr/lib/slurm-jail/nccl-tests/bin/all_reduce_perf

fake_gpu_on() { [ -f "$LC_STATE/fake-gpu" ]; }
fake_driver_dir() { echo "$LC_STATE/nodes/$1/nvidia"; }
fakes_build_dir() { echo "${SLURM_JAIL_BUILD_DIR:-$LC_ROOT/build}/tests/fakes/nvidia-driver"; }

# The fake drivers, the NCCL check and the all_reduce_perf stand-in.
build_fake_gpu() {
    local build=${SLURM_JAIL_BUILD_DIR:-$LC_ROOT/build}
    log "building the fake NVIDIA drivers and the NCCL check in $build"
    cmake --build "$build" -j "$(nproc)" --target fake_nvidia_drivers slurm-jail-nccl-check slurm-jail-nccl-fabric >&2 ||
        die "building the fake drivers failed (see above); they need the test build (hack/install-deps installs googletest)"
}

# install_fake_driver NODE VERSION|none: installs, upgrades or removes a node's
# driver as the driver's installer would, while the node runs (nothing to do
# when the node has VERSION already).
install_fake_driver() {
    local node=$1 version=$2 dir from
    dir=$(fake_driver_dir "$node")
    install -d -m 0755 "$dir"
    if [ "$version" = none ] && [ ! -e "$dir/lib64" ] && [ ! -e "$dir/bin" ]; then return 0; fi
    if [ -f "$dir/lib64/libcuda.so.$version" ] && [ -f "$dir/bin/nvidia-smi" ]; then return 0; fi
    rm -rf "${dir:?}/lib64" "${dir:?}/bin"
    [ "$version" = none ] && return 0
    from=$(fakes_build_dir)/$version
    [ -d "$from/lib" ] ||
        die "no fake driver $version in $(fakes_build_dir); versions: ${LC_FAKE_DRIVER_ALL[*]}"
    install -d -m 0755 "$dir/lib64" "$dir/bin"
    cp -a "$from/lib/." "$dir/lib64/"
    install -m 0755 "$from/bin/nvidia-smi" "$dir/bin/nvidia-smi"
    chown -R root:root "$dir"
}

install_fake_drivers() {
    local i n
    n=$(workers)
    for ((i = 1; i <= n; i++)); do
        install_fake_driver "$(node_name "$i")" "${LC_FAKE_DRIVERS[$(((i - 1) % ${#LC_FAKE_DRIVERS[@]}))]}"
    done
}

# What the jail image holds for the NCCL check, with the stand-in where
# images/nccl-tests installs the real all_reduce_perf.
install_nccl_check_in_jail() {
    local build=${SLURM_JAIL_BUILD_DIR:-$LC_ROOT/build} j
    j=$(jail_dir)
    replace_file "$build/health/slurm-jail-nccl-check" "$j/usr/sbin/slurm-jail-nccl-check"
    replace_file "$build/health/slurm-jail-nccl-fabric" "$j/usr/sbin/slurm-jail-nccl-fabric"
    install -d -m 0755 "$j$(dirname "$LC_ARP")"
    replace_file "$(fakes_build_dir)/probes/fake_all_reduce_perf" "$j$LC_ARP"
}

# " (fake NVIDIA driver VERSION)" for status, when NODE has one.
fake_driver_note() {
    local lib
    fake_gpu_on || return 0
    lib=$(find "$(fake_driver_dir "$1")/lib64" -maxdepth 1 -name 'libcuda.so.*.*' -printf '%f\n' 2>/dev/null | head -1)
    if [ -n "$lib" ]; then echo " (fake NVIDIA driver ${lib#libcuda.so.})"; else echo " (no driver)"; fi
}

# cmd_fake_driver NODE VERSION|none
cmd_fake_driver() {
    [ $# -eq 2 ] || die "fake-driver: give a node and a version (${LC_FAKE_DRIVER_ALL[*]}) or none"
    require_root fake-driver
    fake_gpu_on || die "the cluster was not started with --fake-gpu; run: $0 down && $0 up --fake-gpu"
    [ -d "$LC_STATE/nodes/$1" ] || die "fake-driver: no node '$1' (node1..node$(workers))"
    take_lock
    install_fake_driver "$1" "$2"
    log "$1: fake NVIDIA driver $2; the next job there sees it"
}
