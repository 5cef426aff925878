# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# A jail made of this machine's own root, for measuring GPU work inside it
# against outside (bench/gpu-check): a root-owned directory with /usr, /etc,
# /opt and /var bound in (not recursively: a driver mounted at
# /usr/local/nvidia stays out, and the plugin binds the node's driver there
# as it does for jobs), the merged-/usr links, and empty mount points. The
# programs, Python and CUDA libraries are then the jail's, the driver the
# node's: the split chroot.so makes. Call in a private mount namespace:
# BASE and the work directory are tmpfs mounts there, so the binds and
# everything made go with the namespace; only the two empty directories
# they are mounted on stay (remove_machine_jail_dirs, from outside).
# Never delete files below BASE/jail: it holds this machine's /usr and /etc.
# Sourced; defines functions only.
#
#   make_machine_jail BASE             BASE/jail, BASE/node (node-local
#                                      directories), GPU_JAIL_WORK
#   gpu_jail_settings BASE             chroot.so's settings for that jail
#   remove_machine_jail_dirs BASE      the empty mount points, afterwards
#   build_all_reduce_perf SRC NCCL WORK  all_reduce_perf from nccl-tests' source

# Where workloads go: one directory both sides see at one path.
GPU_JAIL_WORK=/var/tmp/sjail-gpu-check

make_machine_jail() {
    local base=$1 jail=$1/jail d target
    install -d -m 0755 "$base" "$GPU_JAIL_WORK"
    mount -t tmpfs -o mode=0755 sjail-gpu-check "$base" || return 1
    mount -t tmpfs -o mode=0755 sjail-gpu-work "$GPU_JAIL_WORK" || return 1
    install -d -m 0755 "$jail" "$base/node"
    for d in usr etc opt var; do
        [ -d "/$d" ] || continue
        install -d -m 0755 "$jail/$d"
        mount --bind "/$d" "$jail/$d" || return 1
    done
    for d in bin sbin lib lib32 lib64 libx32; do
        if [ -L "/$d" ]; then
            target=$(readlink "/$d")
            ln -sfn "$target" "$jail/$d"
        elif [ -d "/$d" ]; then
            install -d -m 0755 "$jail/$d"
            mount --bind "/$d" "$jail/$d" || return 1
        fi
    done
    for d in proc dev sys tmp run home root mnt; do install -d -m 0755 "$jail/$d"; done
    [ -d "$jail/usr/local/nvidia" ] || {
        echo "this machine has no /usr/local/nvidia: the jail (its /usr) needs it as the mount point of the node's driver tree" >&2
        return 1
    }
    # The work directory is a mount of its own: the jail's /var shows the
    # directory below it, so it is bound there too.
    mount --bind "$GPU_JAIL_WORK" "$jail$GPU_JAIL_WORK" || return 1
    # Only the jail has this file: a task that sees it sees the jail as /.
    : >"$jail/.sjail-gpu-check-jail"
    for d in munge conf spool; do install -d -m 0755 "$base/node/$d"; done
    install -d -m 1777 "$base/node/tmp"
}

remove_machine_jail_dirs() {
    rmdir "$1" "$GPU_JAIL_WORK" 2>/dev/null || true
}

# The node-local pieces under BASE/node (below /run: the plugin makes their
# mount points in the view's own /run), so nothing of Slurm is needed.
# var_tmp=jail: the work directory is below the jail's /var/tmp, which a
# job sees only with that setting (by default its /var/tmp is its /tmp).
gpu_jail_settings() {
    local node=$1/node
    echo "jail=$1/jail state=$1/state munge=$node/munge conf_dir=$node/conf spool=$node/spool tmp=$node/tmp var_tmp=jail"
}

# build_all_reduce_perf SRC NCCL_HOME WORK: builds nccl-tests' all_reduce_perf
# (no MPI) from SRC against NCCL_HOME's include/ and lib/libnccl.so.2, for
# this machine's GPU; prints its path.
build_all_reduce_perf() {
    local src=$1 nccl=$2 work=$3 cc home=$3/nccl
    [ -f "$src/src/all_reduce.cu" ] || {
        echo "no nccl-tests source at $src: put NVIDIA's nccl-tests there (git-ignored)" >&2
        return 1
    }
    cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1 | tr -d .)
    install -d -m 0755 "$home/lib"
    ln -sfn "$nccl/include" "$home/include"
    ln -sfn "$nccl/lib/libnccl.so.2" "$home/lib/libnccl.so"
    make -C "$src/src" -j "$(nproc)" MPI=0 NCCL_HOME="$home" CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}" \
        NVCC_GENCODE="-gencode=arch=compute_$cc,code=sm_$cc" BUILDDIR="$work/nccl-tests" \
        "$work/nccl-tests/all_reduce_perf" >&2 || return 1
    echo "$work/nccl-tests/all_reduce_perf"
}
