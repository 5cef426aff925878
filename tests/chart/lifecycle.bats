#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2154 # variables come from helpers.bash
# Scaling and upgrading the chart's release, run by hack/kube-run: worker
# pods register themselves as dynamic Slurm nodes, leave with their jobs
# done, and a helm upgrade (new image tag, one more worker) keeps keys,
# /home and running jobs. Tests depend on their order.

load helpers

next_tag=0.1.0-kube-run-upgrade

setup_file() {
    require_helm_tools "$root" yaml
    build_images
    local i
    for i in worker login populate-jail; do
        podman tag "localhost/slurm-jail/$i:0.1.0-slurm24.11" "localhost/slurm-jail/$i:$next_tag"
    done
    make_user_keys
    # drain polls every second instead of every ten
    cat >"$BATS_FILE_TMPDIR/poll.yaml" <<'EOF'
nodesets:
  cpu:
    extraEnv:
      - {name: NODE_LIFECYCLE_POLL, value: "1"}
EOF
    release_start -f "$BATS_FILE_TMPDIR/keys.yaml" -f "$BATS_FILE_TMPDIR/poll.yaml"
    make_known_hosts "$BATS_FILE_TMPDIR/install.yaml"
    wait_for_nodes 2
}

teardown() { dump_release; }

teardown_file() {
    release_stop
    local i
    for i in worker login populate-jail; do
        podman untag "localhost/slurm-jail/$i:$next_tag" "localhost/slurm-jail/$i:$next_tag" 2>/dev/null || true
    done
}

# config_of MANIFEST: the slurm-config ConfigMap's data, as JSON.
config_of() {
    node -e '
        const YAML = require("yaml");
        for (const d of YAML.parseAllDocuments(require("fs").readFileSync(process.argv[1], "utf8"))) {
            const o = d.toJSON();
            if (o && o.kind === "ConfigMap" && o.metadata.name === "t-slurm-cluster-slurm-config") console.log(JSON.stringify(o.data));
        }' "$1"
}

job_state() { ctl scontrol show job "$1" | grep -oE 'JobState=[A-Z]+|ExitCode=[0-9:]+' | tr '\n' ' '; }

@test "scale out through helm upgrade: a third worker joins; no slurm.conf change, no slurmctld restart" {
    local ctld_pid
    ctld_pid=$(ctl pgrep -x slurmctld)
    kube_run_render "$BATS_FILE_TMPDIR/three.yaml" -f "$BATS_FILE_TMPDIR/keys.yaml" -f "$BATS_FILE_TMPDIR/poll.yaml" --set nodesets.cpu.replicas=3
    [ "$(config_of "$BATS_FILE_TMPDIR/three.yaml")" = "$(config_of "$BATS_FILE_TMPDIR/install.yaml")" ] ||
        fail "slurm.conf (or another Slurm config file) changed with the replica count"
    run kr apply -f "$BATS_FILE_TMPDIR/three.yaml"
    assert_success
    assert_output --partial 'pod t-slurm-cluster-cpu-2: started'
    refute_output --partial 'rolling'
    wait_for_nodes 3
    [ "$(ctl pgrep -x slurmctld)" = "$ctld_pid" ]
    run ctl sinfo -h -N -o '%N %P %f'
    assert_line 't-slurm-cluster-cpu-2 main* nodeset-cpu'
    run ctl srun -N3 hostname
    assert_success
    assert_line t-slurm-cluster-cpu-2
}

@test "scale in with a job running on the leaving node: the job finishes, the node is drained and removed" {
    local job start
    job=$(ctl bash -c "cd /tmp && sbatch --parsable -w t-slurm-cluster-cpu-2 -o /home/testuser/scale-in-%j.out --uid testuser --wrap 'sleep 8; echo finished on \$SLURMD_NODENAME'")
    [[ $job =~ ^[0-9]+$ ]]
    for _ in $(seq 40); do [[ "$(job_state "$job")" == *RUNNING* ]] && break; sleep 0.25; done
    start=$EPOCHREALTIME
    run kr scale statefulset/t-slurm-cluster-cpu --replicas 2
    assert_success
    note "scale-in waiting for an 8 s job: $(elapsed_since "$start") s"
    assert_output --partial 'node-lifecycle: t-slurm-cluster-cpu-2: drained, no jobs left'
    assert_output --partial 'node-lifecycle: t-slurm-cluster-cpu-2: node record removed'
    assert_output --partial 'pod t-slurm-cluster-cpu-2: container slurmd exited with status 0'
    run job_state "$job"
    assert_output 'JobState=COMPLETED ExitCode=0:0 '
    run as_testuser "cat scale-in-$job.out"
    assert_output 'finished on t-slurm-cluster-cpu-2'
    # no ghost: slurmctld no longer knows the node
    run node_states
    assert_output $'t-slurm-cluster-cpu-0 idle\nt-slurm-cluster-cpu-1 idle'
    run ctl scontrol show node t-slurm-cluster-cpu-2
    assert_failure
    assert_output --partial 'not found'
}

@test "scale out again through kubectl scale: the re-created node registers afresh" {
    run kr scale statefulset/t-slurm-cluster-cpu --replicas 3
    assert_success
    wait_for_nodes 3
    run ctl srun -w t-slurm-cluster-cpu-2 cat /etc/slurm-jail-release
    assert_output SLURM_JAIL_VERSION=0.1.0
}

@test "upgrade (new image tag, one more worker): keys kept, /home not re-populated, a running job survives" {
    local job start
    as_testuser 'echo precious > keep.txt'
    job=$(as_testuser "sbatch --parsable -w t-slurm-cluster-cpu-0 -o upgrade-%j.out --wrap 'sleep 10; echo survived on \$SLURMD_NODENAME'")
    [[ $job =~ ^[0-9]+$ ]]
    for _ in $(seq 40); do [[ "$(job_state "$job")" == *RUNNING* ]] && break; sleep 0.25; done
    kube_run_render "$BATS_FILE_TMPDIR/upgrade.yaml" -f "$BATS_FILE_TMPDIR/keys.yaml" -f "$BATS_FILE_TMPDIR/poll.yaml" \
        --set image.tag="$next_tag" --set nodesets.cpu.replicas=4
    # helm's lookup found the Secrets kube-run holds: the same keys
    for k in "t-slurm-cluster-munge munge.key" "t-slurm-cluster-ssh-host-keys ssh_host_ecdsa_key" "t-slurm-cluster-ssh-host-keys ssh_host_rsa_key"; do
        # shellcheck disable=SC2086
        cmp <(secret_data "$BATS_FILE_TMPDIR/upgrade.yaml" $k) <(secret_data "$BATS_FILE_TMPDIR/install.yaml" $k) ||
            fail "$k changed on upgrade"
    done
    start=$EPOCHREALTIME
    run kr apply -f "$BATS_FILE_TMPDIR/upgrade.yaml"
    assert_success
    note "upgrade (every pod rolled, one job waited for): $(elapsed_since "$start") s"
    # the pre-upgrade hook ran and left the jail (and /home) as it was
    run kr logs job/t-slurm-cluster-populate-jail
    assert_output --partial 'nothing to do'
    assert_output --partial 'up to date'
    # every pod runs the new tag; the worker with the job waited for it
    run kr get
    assert_success
    refute_line --regexp ':0\.1\.0-slurm24\.11(,|$)'
    [ "$(grep -c ":$next_tag" <<<"$output")" -eq 6 ] # controller, login, 4 workers
    wait_for_nodes 4
    run job_state "$job"
    assert_output 'JobState=COMPLETED ExitCode=0:0 '
    # the login pod was replaced, with the same host key (StrictHostKeyChecking);
    # munge across old and new pods: the same key
    make_known_hosts "$BATS_FILE_TMPDIR/install.yaml"
    run as_testuser "cat keep.txt upgrade-$job.out; srun -N4 cat /etc/slurm-jail-release | sort -u"
    assert_success
    assert_line precious
    assert_line 'survived on t-slurm-cluster-cpu-0'
    assert_line SLURM_JAIL_VERSION=0.1.0
}
