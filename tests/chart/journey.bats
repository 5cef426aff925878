#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2154 # variables come from helpers.bash
# A user's journey through the chart as rendered from its default values
# (plus the test users' SSH keys, and the jail's backup to a restic
# repository on this machine), run by hack/kube-run on podman: every pod,
# command, mount, Secret and hook is the chart's own.

load helpers

setup_file() {
    require_helm_tools "$root" yaml
    build_images
    make_user_keys
    make_backup_values
    release_start -f "$BATS_FILE_TMPDIR/keys.yaml" -f "$BATS_FILE_TMPDIR/backup.yaml"
    make_known_hosts "$BATS_FILE_TMPDIR/install.yaml"
    wait_for_nodes 2
}

teardown() { dump_release; }

# The jail's backup CronJob, with a path repository on a hostPath volume
# (this machine's $BATS_FILE_TMPDIR/backups) and its password in a Secret of
# the chart's extraObjects.
make_backup_values() {
    install -d -m 0700 "$BATS_FILE_TMPDIR/backups"
    echo 'journey backup password' >"$BATS_FILE_TMPDIR/backup-password"
    cat >"$BATS_FILE_TMPDIR/backup.yaml" <<EOF
jail:
  backup:
    enabled: true
    repository: /var/lib/slurm-jail-backup/jail
    repositoryVolume: {hostPath: {path: $BATS_FILE_TMPDIR/backups, type: Directory}}
    passwordSecret: {name: jail-backup-password}
    extraArgs: [--init]
extraObjects:
  - apiVersion: v1
    kind: Secret
    metadata: {name: jail-backup-password, namespace: hpc}
    stringData: {password: journey backup password}
EOF
}

teardown_file() { release_stop; }

@test "journey: the chart's hooks ran first: the PVC, then the populate Job, then the cluster" {
    run grep -nE 'job t-slurm-cluster-populate-jail: complete|pod t-slurm-cluster-controller-0: started' "$BATS_FILE_TMPDIR/install.log"
    assert_line --index 0 --partial 'job t-slurm-cluster-populate-jail: complete'
    assert_line --index 1 --partial 'pod t-slurm-cluster-controller-0: started'
    run kr logs job/t-slurm-cluster-populate-jail
    assert_success
    # The chart's default: a jail volume with generations.
    assert_output --partial 'first population: building generation 1'
    assert_output --partial 'generation 1 of /mnt/jail is live'
    run kr get
    assert_line --regexp '^t-slurm-cluster-controller-0	10\.244\.[0-9.]+	Ready	StatefulSet/t-slurm-cluster-controller	localhost/slurm-jail/worker:0\.1\.0-slurm24\.11$'
    assert_line --regexp '^t-slurm-cluster-login-0	.*	Ready	'
}

@test "journey: ssh to the login Service lands in the jail, with the chart's host key" {
    run as_testuser 'id -un; pwd; cat /etc/slurm-jail-release; test -e /usr/sbin/sshd && echo has-sshd || echo no-sshd; ls -a /'
    assert_success
    assert_line --index 0 testuser
    assert_line --index 1 /home/testuser
    assert_line --index 2 SLURM_JAIL_VERSION=0.1.0
    # the login container has sshd, the jail does not: the session is chrooted
    assert_line --index 3 no-sshd
    # into the live generation, which has none of the volume's own state
    assert_line home
    refute_output --partial '.slurm-jail'
}

@test "journey: sbatch --wait in the SSH session runs on a worker inside the jail; output read back over SSH" {
    local start
    start=$EPOCHREALTIME
    run as_testuser "sinfo -h -N -o '%N %T' && sbatch --parsable --wait -o 'job-%j.out' --wrap '
            echo node=\$SLURMD_NODENAME; id -un; cat /etc/slurm-jail-release; pwd
            test -x /usr/sbin/slurmd && echo worker-root || echo jail-root
            echo written-by-job > from-job.txt'"
    assert_success
    assert_line 't-slurm-cluster-cpu-0 idle'
    assert_line 't-slurm-cluster-cpu-1 idle'
    local job=${lines[-1]}
    [[ $job =~ ^[0-9]+$ ]]
    note "sbatch --wait round trip over ssh: $(elapsed_since "$start") s"

    run as_testuser "cat job-$job.out; cat from-job.txt"
    assert_success
    assert_line --regexp '^node=t-slurm-cluster-cpu-[01]$'
    assert_line testuser
    assert_line SLURM_JAIL_VERSION=0.1.0
    assert_line /home/testuser
    assert_line jail-root # the worker's own root has slurmd; the jail has none
    assert_line written-by-job
}

@test "journey: srun -N2 from the SSH session runs on both workers inside the jail" {
    run as_testuser "srun -N2 -l bash -c 'echo \$SLURMD_NODENAME \$(cat /etc/slurm-jail-release)' | sort"
    assert_success
    assert_line '0: t-slurm-cluster-cpu-0 SLURM_JAIL_VERSION=0.1.0'
    assert_line '1: t-slurm-cluster-cpu-1 SLURM_JAIL_VERSION=0.1.0'
}

@test "journey: the helm test hook's Pod passes" {
    run kr test
    assert_success
    assert_line 'Phase: Succeeded'
    assert_output --partial 'OK: the job ran inside the jail (SLURM_JAIL_VERSION=0.1.0)'
}

@test "journey: a user missing from the jail's passwd is refused, even with an authorized key" {
    run login_ssh mallory -i "$BATS_FILE_TMPDIR/keys/mallory" -- true
    assert_failure 255
    assert_output --partial 'Permission denied'
    run kr logs t-slurm-cluster-login-0
    assert_output --partial 'Invalid user mallory'
}

@test "journey: password logins are refused; only public keys are offered" {
    run login_ssh testuser -o PubkeyAuthentication=no \
        -o PreferredAuthentications=password,keyboard-interactive -- true
    assert_failure 255
    assert_output --partial 'Permission denied (publickey)'
    # root logs in only with its own authorized key, never with another user's.
    run login_ssh root -i "$BATS_FILE_TMPDIR/keys/testuser" -- true
    assert_failure 255
}

@test "journey: the jail-backup CronJob backs up the users' data and the live file, never a generation" {
    run as_testuser 'echo "worth keeping" > backed-up.txt'
    assert_success
    run kr run-cronjob t-slurm-cluster-jail-backup
    assert_success
    assert_output --partial 'created the restic repository'
    assert_output --partial 'backing up /home and the live file of /mnt/jail'
    export RESTIC_REPOSITORY=$BATS_FILE_TMPDIR/backups/jail RESTIC_PASSWORD_FILE=$BATS_FILE_TMPDIR/backup-password
    run restic ls latest
    assert_success
    assert_line /home/testuser/backed-up.txt
    assert_line /.slurm-jail/live
    refute_line --regexp '^/\.slurm-jail/generations'
    refute_line --regexp '^/(etc|usr)(/|$)'
    run restic dump latest /home/testuser/backed-up.txt
    assert_output 'worth keeping'
}

@test "journey: the login pod keeps the chart's host key when it is recreated" {
    local before
    before=$(kr ip t-slurm-cluster-login-0)
    run kr delete pod/t-slurm-cluster-login-0
    assert_success
    assert_output --partial 'pod t-slurm-cluster-login-0: started'
    make_known_hosts "$BATS_FILE_TMPDIR/install.yaml" # the new pod's address, the same keys
    [ "$(kr ip t-slurm-cluster-login-0)" != "$before" ]
    # StrictHostKeyChecking=yes against the keys of the rendered Secret
    run as_testuser 'cat /etc/slurm-jail-release'
    assert_success
    assert_output SLURM_JAIL_VERSION=0.1.0
}

@test "journey: a worker stops cleanly: preStop drains and removes its node, slurmd exits 0 on SIGTERM" {
    local start
    start=$EPOCHREALTIME
    run kr scale statefulset/t-slurm-cluster-cpu --replicas 1
    assert_success
    note "worker scale-in (preStop, SIGTERM): $(elapsed_since "$start") s"
    assert_output --partial 'node-lifecycle: t-slurm-cluster-cpu-1: drained, no jobs left'
    assert_output --partial 'node-lifecycle: t-slurm-cluster-cpu-1: node record removed'
    assert_output --partial 'pod t-slurm-cluster-cpu-1: container slurmd exited with status 0'
    run kr logs t-slurm-cluster-cpu-1 -c slurmd
    assert_output --partial 'stopping slurmd'
    assert_output --partial 'slurmd exited with status 0'
    # The last job on cpu-0 may still be completing: a cold run saw it so
    # for about a minute after cpu-1 left.
    wait_for_nodes 1 idle 150
    run node_states
    assert_output 't-slurm-cluster-cpu-0 idle'
}
