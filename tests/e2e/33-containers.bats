#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Containers in jobs (local-cluster up --containers --fake-gpu; on another
# Slurm release than this machine's without --fake-gpu, and the GPU test
# skips: helpers' containers_up_args): the jail has
# the jail image's container runtimes. A user gets an image with no registry
# (a root filesystem made with mmdebstrap, as a tar file) and runs it in a
# job with Charliecloud (a directory and a SquashFS file) and with rootless
# podman (its store in the job's /tmp); the node's (fake) NVIDIA driver
# reaches the container. Tried as a hostile user: a container stays in the
# job's PID namespace (ch-run's in its IPC namespace too), cannot undo or
# write the jail's mounts, and nothing of it is left on the node after the
# job. Slurm's own OCI support reads the step's bundle on the node's root,
# and slurm-jail-check says so.

bats_require_minimum_version 1.5.0

load helpers

IMAGE=$HOME_IN_JAIL/e2e-image.tar
PROBES=$HOME_IN_JAIL/container-probes
# An OCI bundle on this machine's (every node's) own root only.
NODE_ONLY_BUNDLE=/var/tmp/e2e-node-only-bundle
NV_LIB=/usr/local/nvidia/lib64
# What a job runs first: the image unpacked into the job's /tmp, for ch-run,
# and imported into podman's store (also in the job's /tmp).
UNPACK="mkdir /tmp/img && tar -xf $IMAGE -C /tmp/img"
IMPORT="podman import -q $IMAGE localhost/e2e >/dev/null"

# make_image TAR: a small root filesystem made with mmdebstrap (busybox and
# the C library, which the node's driver libraries need), as a tar file that
# a user can unpack: no device files (runtimes bind the job's /dev), and the
# mount points Charliecloud needs.
make_image() {
    local dir=$BATS_FILE_TMPDIR/image
    # shellcheck source=hack/lib/mmdebstrap.sh
    . "$SLURM_JAIL_ROOT/hack/lib/mmdebstrap.sh"
    run_mmdebstrap e2e-image --variant=extract --include=busybox-static,libc6 --format=directory \
        bookworm "$dir" >&2
    chroot "$dir" /bin/busybox --install -s /bin
    # mmdebstrap makes /dev only where it may make device files (not in
    # every container): the image has the mount point either way.
    mkdir -p "$dir"/dev "$dir"/proc "$dir"/sys "$dir"/home "$dir"/mnt "$dir"/run "$dir"/usr/local/nvidia
    touch "$dir/etc/passwd" "$dir/etc/group"
    echo e2e-image >"$dir/etc/image-name"
    tar -C "$dir" --exclude='./dev/*' -cf "$1" .
    rm -rf "$dir"
}

setup_file() {
    # shellcheck disable=SC2046 # one word each
    use_cluster $(containers_up_args)
    # node1's FUSE, overlay and SquashFS mounts before any job: the
    # machine's own (its root is overlay in a pod), not a container's.
    container_mounts node1 >"$BATS_FILE_TMPDIR/node1-container-mounts"
    make_image "$JAIL$IMAGE"
    chown "$TEST_UID:$TEST_UID" "$JAIL$IMAGE"
    install -d -m 0755 -o "$TEST_UID" -g "$TEST_UID" "$HOST_HOME/container-probes"
    install -m 0755 -o "$TEST_UID" "$SLURM_JAIL_BUILD_DIR/tests/fakes/nvidia-driver/probes/fake_nvidia_cuda_probe" \
        "$HOST_HOME/container-probes/"
    gcc -std=c11 -O2 -o "$HOST_HOME/container-probes/stuck_fuse" "$BATS_TEST_DIRNAME/fuse/stuck_fuse.c"
    chown "$TEST_UID:$TEST_UID" "$HOST_HOME/container-probes/stuck_fuse"
}

teardown_file() {
    rm -rf "$JAIL$IMAGE" "$HOST_HOME/container-probes" "$STATE/etc/oci.conf" "$NODE_ONLY_BUNDLE" \
        "$HOST_HOME/.local/share/containers" "$HOST_HOME/.config/cni"
    rmdir "$HOST_HOME/.local/share" "$HOST_HOME/.local" "$HOST_HOME/.config" 2>/dev/null || true
}

setup() { load_assertions; }

teardown() {
    cancel_test_jobs
    free_stuck_fuse
}

# free_stuck_fuse: what a failed FUSE test leaves (a process no signal
# ends, node1 drained) undone: the test user's FUSE connections aborted
# through a fusectl of a private mount namespace, node1 resumed.
free_stuck_fuse() {
    local conns=/sys/fs/fuse/connections
    unshare -m --propagation private sh -c "mount -t fusectl fusectl $conns 2>/dev/null || true
        for c in $conns/*/; do [ \"\$(stat -c %u \"\$c\" 2>/dev/null)\" = $TEST_UID ] && echo 1 >\"\$c/abort\"; done; true"
    if ctld_exec sinfo -h -n node1 -o %T | grep -q drain; then
        ctld_exec scontrol update nodename=node1 state=resume || true
    fi
}

node1_idle_in_slurm() { [ "$(ctld_exec sinfo -h -n node1 -o %T)" = idle ]; }

# stuck_fuse_cancelled MODE: a job on node1 whose FUSE daemon read a
# request of a reader and never answers it (stuck_fuse MODE: it waits, or
# it is stopped); once the reader waits the job is cancelled. Succeeds when
# no process of the user is left within 20 s and node1 is idle, not drained.
stuck_fuse_cancelled() {
    local out=$HOST_HOME/container-probes/fuse-$1.out job t0
    rm -f "$out"
    job=$(ush "sbatch --parsable -w node1 -o $PROBES/fuse-$1.out --wrap '$PROBES/stuck_fuse $1 /tmp/stuck'")
    wait_until 30 grep -q '^blocked ' "$out" || { cat "$out"; return 1; }
    t0=$EPOCHREALTIME
    ush "scancel $job"
    wait_until 20 no_user_processes || { ps -o pid,stat,wchan:30,args -u "$TEST_UID"; return 1; }
    printf '# the job'"'"'s last process went %s s after scancel\n' "$(elapsed_since "$t0")" >&3
    wait_until 20 node1_idle_in_slurm
    rm -f "$out"
}

@test "hostile: a FUSE daemon in a job that never answers a reader: after scancel no process of the job is left and the node stays in service" {
    stuck_fuse_cancelled hang
}

@test "hostile: a stopped FUSE daemon (SIGSTOP) with a reader waiting on it: after scancel no process of the job is left and the node stays in service" {
    stuck_fuse_cancelled stop
}

# Charliecloud keeps a SquashFS image's mount point in /var/tmp/USER.ch: a
# name another user could take first, cluster-wide, in a shared /var/tmp.
@test "hostile: a user who takes another user's name in /var/tmp (Charliecloud's /var/tmp/USER.ch) takes it in their own job only" {
    local squatter
    squatter=$(ush "sbatch --parsable -w node1 -o /dev/null --wrap 'mkdir -m 0700 /var/tmp/$OTHER_USER.ch && touch /var/tmp/$OTHER_USER.ch/taken && exec sleep 303'")
    wait_until 30 user_runs 'sleep 303'
    [ ! -e "$JAIL/var/tmp/$OTHER_USER.ch" ]
    # The other user, on the same node while the squatter's job runs.
    run ush_other "srun -w node1 bash -c 'mkdir /tmp/img && tar -xf $IMAGE -C /tmp/img &&
        mksquashfs /tmp/img /tmp/img.sqfs -quiet -no-progress && ch-run /tmp/img.sqfs -- cat /etc/image-name'"
    assert_success
    assert_output e2e-image
    ush "scancel $squatter"
}

# container_mounts NODE: the FUSE, overlay and SquashFS mounts in NODE's
# mount namespace, sorted.
container_mounts() {
    node_mounts "$1" | awk '$3 ~ /^(fuse|overlay|squashfs)/' || true
}

# container_leftovers: what a container of the test user could leave on the
# nodes or this machine: image stores and runtime directories outside a job
# (podman keeps only its blob-info cache in the home), and FUSE or overlay
# mounts on a node that were not there before the file's first job.
container_leftovers() {
    find /tmp /dev/shm "$STATE"/nodes/*/tmp -maxdepth 2 \
        \( -name "containers-$TEST_UID" -o -name "containers-user-$TEST_UID" -o -name "podman-run-$TEST_UID" \
        -o -name "storage-run-$TEST_UID" \) -print 2>/dev/null || true
    find "$HOST_HOME/.local/share/containers" -name storage -print 2>/dev/null || true
    container_mounts node1 | comm -13 "$BATS_FILE_TMPDIR/node1-container-mounts" -
}

no_user_processes() { ! pgrep -u "$TEST_UID" >/dev/null; }
no_job_state() { [ -z "$(job_state_entries)" ]; }
user_runs() { pgrep -u "$TEST_UID" -fx "$1" >/dev/null; }

@test "Charliecloud: ch-run runs the image, unpacked and as a SquashFS file, as the user, in the job's PID namespace" {
    run ush "srun -w node1 bash -c '$UNPACK && ch-run /tmp/img -- sh -c \"cat /etc/image-name; id -u; cat /proc/1/comm\" &&
        mksquashfs /tmp/img /tmp/img.sqfs -quiet -no-progress && mkdir /tmp/sqfs && ch-run -m /tmp/sqfs /tmp/img.sqfs -- cat /etc/image-name'"
    assert_success
    assert_output "e2e-image
$TEST_UID
sjail-job-init
e2e-image"
    # Mounted in the job's /tmp (-m), not in /var/tmp/USER.ch on the shared jail.
    [ ! -e "$JAIL/var/tmp/$TEST_USER.ch" ]
}

@test "rootless podman: imports the image, builds on it and runs it; its store is in the job's /tmp, not in the shared home" {
    # The build's RUN step gives a file to another id of the user's
    # subordinate range (newuidmap), as package installs do.
    run ush "srun -w node1 bash -c '$IMPORT && mkdir /tmp/ctx &&
        printf \"FROM localhost/e2e\nRUN echo built >/etc/built && chown 1234:1234 /etc/built\n\" >/tmp/ctx/Containerfile &&
        podman build -q -t localhost/e2e-built /tmp/ctx >/dev/null &&
        podman run --rm localhost/e2e-built sh -c \"cat /etc/image-name /etc/built; id -u; stat -c %u /etc/built\" &&
        podman info --format {{.Store.GraphRoot}}' 2>/dev/null"
    assert_success
    assert_output "e2e-image
built
0
1234
/tmp/containers-$TEST_UID/storage"
    run container_leftovers
    assert_output ''
}

@test "the node's GPU driver reaches the container: ch-run and podman load its libcuda and NVML" {
    skip_unless_fake_gpu
    local in_container="/usr/local/nvidia/bin/nvidia-smi; /mnt/fake_nvidia_cuda_probe"
    run ush "srun -w node2 bash -c '$UNPACK && LD_LIBRARY_PATH=$NV_LIB ch-run -b /usr/local/nvidia:/usr/local/nvidia \
        -b $PROBES:/mnt /tmp/img -- sh -c \"$in_container\"'"
    assert_success
    assert_line "Driver Version: 570.124.06"
    assert_line "NVML: $NV_LIB/libnvidia-ml.so.1"
    assert_line "cuInit=0 cuDriverGetVersion=0 version=12080 libcuda=$NV_LIB/libcuda.so.1"
    run ush "srun -w node2 bash -c '$IMPORT && podman run --rm -e LD_LIBRARY_PATH=$NV_LIB \
        -v /usr/local/nvidia:/usr/local/nvidia:ro -v $PROBES:/mnt:ro localhost/e2e sh -c \"$in_container\"' 2>/dev/null"
    assert_success
    assert_line "Driver Version: 570.124.06"
    assert_line "cuInit=0 cuDriverGetVersion=0 version=12080 libcuda=$NV_LIB/libcuda.so.1"
}

@test "hostile: a user namespace in a job cannot unmount, remount or write the jail's mounts" {
    # What every runtime does first: a user namespace with a mount namespace
    # of its own, where the user is root.
    # shellcheck disable=SC2016 # run by the job's sh
    local try='findmnt -rn -o TARGET,SOURCE,OPTIONS >/tmp/before
        for m in /usr/local/nvidia /etc/ld.so.cache /etc/slurm /home /tmp /proc /; do umount $m || umount -l $m; done
        mount -o remount,bind,rw /usr/local/nvidia; mount -o remount,rw /etc/ld.so.cache
        touch /usr/local/nvidia/x /etc/ld.so.cache /etc/passwd
        findmnt -rn -o TARGET,SOURCE,OPTIONS | cmp - /tmp/before && echo mounts-unchanged'
    run ush "srun -w node2 unshare -Urm sh -c '$try' 2>&1"
    assert_line mounts-unchanged
    assert_line --regexp "cannot touch '/etc/ld.so.cache': (Read-only file system|Permission denied)"
    assert_line --partial "cannot touch '/etc/passwd': Permission denied"
    # The node's GPU driver, bound read-only (a fake one: this machine's release only).
    if fake_gpu_release; then
        assert_line --partial "cannot touch '/usr/local/nvidia/x': Read-only file system"
        [ ! -e "$STATE/nodes/node2/nvidia/x" ]
    fi
}

@test "hostile: a job's containers stay in its PID namespace (ch-run's in its IPC namespace too, seeing its /tmp and /dev/shm; podman's IPC namespace is not the node's) and go with it" {
    local job chrun_pid podman_pid node_ipc
    job=$(ush "sbatch --parsable -w node1 -o /dev/null --wrap '$UNPACK && $IMPORT && echo job-file >/tmp/job-file &&
        echo job-shm >/dev/shm/job-shm || exit 1; ch-run -b $HOME_IN_JAIL:/mnt /tmp/img -- sh -c \"cat /tmp/job-file /dev/shm/job-shm >/mnt/seen; exec sleep 301\" &
        podman run --rm localhost/e2e sleep 302 & wait'")
    wait_until 60 user_runs 'sleep 302'
    wait_until 10 user_runs 'sleep 301'
    chrun_pid=$(pgrep -u "$TEST_UID" -fx 'sleep 301')
    podman_pid=$(pgrep -u "$TEST_UID" -fx 'sleep 302')
    assert_equal "$(cat "$HOST_HOME/seen")" "job-file
job-shm"
    # ch-run's process is in the job's PID and IPC namespaces; podman's in a
    # PID namespace below the job's (three pids: this machine's, the job's,
    # the container's) and an IPC namespace that is not the node's.
    assert_equal "$(stat -L -c %i "/proc/$chrun_pid/ns/pid")" "$(job_ns_inode node1 "$job" pid)"
    assert_equal "$(stat -L -c %i "/proc/$chrun_pid/ns/ipc")" "$(job_ns_inode node1 "$job" ipc)"
    assert_equal "$(awk '$1 == "NSpid:" { print NF - 1 }' "/proc/$podman_pid/status")" 3
    node_ipc=$(stat -L -c %i "/proc/$(slurmd_pid node1)/ns/ipc")
    [ "$(stat -L -c %i "/proc/$podman_pid/ns/ipc")" != "$node_ipc" ]
    # Another step of the job sees both containers' processes.
    run ush "srun --jobid=$job --overlap -w node1 pgrep -c -fx 'sleep 30[12]'"
    assert_output 2
    ush "scancel $job"
    # Every process of the user, in any namespace of this machine.
    wait_until 60 no_user_processes
    run container_leftovers
    assert_output ''
    wait_until 30 no_job_state
    rm -f "$HOST_HOME/seen"
}

@test "slurm-jail-check on a node ready for containers: no warning; /dev/fuse 0600 and a user without subordinate ids: a warning each; a range holding a user's id: a problem" {
    local check=$CLUSTER_BUILD/plugin/jail_check/slurm-jail-check
    run on_node node1 "$check"
    assert_success
    refute_output --partial WARNING
    cp "$JAIL/etc/subuid" "$BATS_TEST_TMPDIR/subuid"
    sed -i "/^$OTHER_USER:/d" "$JAIL/etc/subuid"
    chmod 0600 "$STATE/nodes/node1/fuse"
    run on_node node1 "$check"
    chmod 0666 "$STATE/nodes/node1/fuse"
    cp "$BATS_TEST_TMPDIR/subuid" "$JAIL/etc/subuid"
    assert_success
    assert_line "WARNING: /dev/fuse on this node is not readable and writable by every user: the jail's container runtimes (/usr/bin/podman, /usr/bin/ch-run) cannot mount images over FUSE (SquashFS files, fuse-overlayfs, enroot) -- fix: chmod 0666 /dev/fuse, and a udev rule that keeps it so: KERNEL==\"fuse\", MODE=\"0666\""
    assert_line --regexp "^WARNING: jail users without subordinate ids in /mnt/jail/etc/subuid and /etc/subgid \($OTHER_USER\): rootless podman maps only their own id -- fix: "
    assert_line "no problems found (2 warnings)"
    # A range that holds another user's id: its owner's containers could
    # act as that user on the shared jail.
    sed -i "s/^$OTHER_USER:.*/$OTHER_USER:$((TEST_UID - 1)):10/" "$JAIL/etc/subuid"
    run on_node node1 "$check"
    cp "$BATS_TEST_TMPDIR/subuid" "$JAIL/etc/subuid"
    assert_failure
    assert_line --regexp "^PROBLEM: $OTHER_USER's subordinate ids $((TEST_UID - 1))-$((TEST_UID + 8)) in /etc/subuid include $TEST_USER's id $TEST_UID: $OTHER_USER's containers can act as $TEST_USER on the shared jail -- fix: "
}

@test "Slurm's own OCI support reads a step's bundle on the node's own root: slurm-jail-check calls oci.conf a problem" {
    # oci.conf as Slurm documents it for rootless runc, beside slurm.conf.
    cat >"$STATE/etc/oci.conf" <<'EOF_OCI'
RunTimeQuery="runc --rootless=true --root=/tmp/runc-%u state %n.%u.%j.%s.%t"
RunTimeKill="runc --rootless=true --root=/tmp/runc-%u kill -a %n.%u.%j.%s.%t"
RunTimeDelete="runc --rootless=true --root=/tmp/runc-%u delete --force %n.%u.%j.%s.%t"
RunTimeRun="runc --rootless=true --root=/tmp/runc-%u run %n.%u.%j.%s.%t -b %b"
EOF_OCI
    # A bundle that exists on the node's own root only: slurmstepd reads its
    # config.json there, as root, and the runtime in the jail then looks for
    # its root filesystem in vain.
    install -d -m 0755 "$NODE_ONLY_BUNDLE/rootfs"
    ush "srun -w node1 bash -c 'cd /tmp && runc spec --rootless && cat config.json'" >"$NODE_ONLY_BUNDLE/config.json"
    run ush "srun -w node1 --container=$NODE_ONLY_BUNDLE true"
    assert_failure
    assert_output --partial "invalid rootfs: stat $NODE_ONLY_BUNDLE/rootfs: no such file or directory"
    run nsenter -t "$(slurmd_pid node1)" -m -u -n -- "$CLUSTER_BUILD/plugin/jail_check/slurm-jail-check"
    rm -f "$STATE/etc/oci.conf"
    assert_failure
    assert_line "PROBLEM: /etc/slurm/oci.conf turns on Slurm's own OCI support: for srun --container=DIR, slurmstepd reads DIR/config.json as root on the node's own root, at a path the user chooses, before the step enters the jail -- fix: remove /etc/slurm/oci.conf; users run containers inside their jobs with podman or ch-run (see docs/containers.md)"
}
