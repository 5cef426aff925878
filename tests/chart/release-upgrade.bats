#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2154 # variables come from helpers.bash
# Upgrading a running cluster from Slurm 24.11 to 26.05 the way the chart's
# README says ("Upgrading Slurm"): the controller first (controller.image
# set to the new release's worker image), then nodes, login and jail
# (slurm.release). Run by hack/kube-run; tests depend on their order.
# The new release's images are built in the background from the suite's
# start (upgrade-images.bash); setup_file waits for them.

load helpers
load upgrade-images

old=$upgrade_old
new=$upgrade_new

setup_file() {
    require_helm_tools "$root" yaml
    local start
    build_images
    start=$EPOCHREALTIME
    await_upgrade_images
    note "images/build-images --slurm $new: waited $(elapsed_since "$start") s for it (started with the suite)"
    make_user_keys
    release_start -f "$BATS_FILE_TMPDIR/keys.yaml" --set-string slurm.release="$old"
    make_known_hosts "$BATS_FILE_TMPDIR/install.yaml"
    wait_for_nodes 2
}

teardown() { dump_release; }

teardown_file() { release_stop; }

job_state() { ctl scontrol show job "$1" | grep -oE 'JobState=[A-Z]+|ExitCode=[0-9:]+' | tr '\n' ' '; }

# The Slurm version a pod's daemon or command reports: "slurm 26.05.5" -> 26.05.
version_in() { kr exec "$1" -- "${@:2}" | sed -nE 's/^slurm(-wlm)? ([0-9]+\.[0-9]+)\..*/\2/p'; }

# upgrade_to FILE [HELM ARGS...]: render with the user keys and apply.
upgrade_to() {
    local out=$BATS_FILE_TMPDIR/$1 start
    shift
    kube_run_render "$out" -f "$BATS_FILE_TMPDIR/keys.yaml" "$@"
    start=$EPOCHREALTIME
    kr apply -f "$out"
    note "kube-run apply ($(basename "$out")): $(elapsed_since "$start") s"
}

@test "the cluster runs Slurm $old everywhere, a job is running and a file is in /home" {
    assert_equal "$(version_in t-slurm-cluster-controller-0 slurmctld -V)" "$old"
    assert_equal "$(version_in t-slurm-cluster-cpu-0 slurmd -V)" "$old"
    run as_testuser 'echo kept > before-upgrade.txt; sinfo -V'
    assert_success
    assert_output --regexp "^slurm(-wlm)? ${old//./\\.}\."
    run as_testuser "sbatch --parsable -w t-slurm-cluster-cpu-0 -o across-%j.out --wrap 'sleep 50; echo finished on \$SLURMD_NODENAME'"
    assert_success
    echo "$output" >"$BATS_FILE_TMPDIR/job"
    for _ in $(seq 40); do [[ "$(job_state "$output")" == *RUNNING* ]] && break; sleep 0.25; done
    assert_equal "$(job_state "$output")" 'JobState=RUNNING ExitCode=0:0 '
}

@test "step 1: slurmctld $new takes over the $old state; the $old nodes stay up and take jobs" {
    run upgrade_to controller.yaml --set-string slurm.release="$old" \
        --set controller.image="localhost/slurm-jail/worker:0.1.0-slurm$new"
    assert_success
    assert_equal "$(version_in t-slurm-cluster-controller-0 slurmctld -V)" "$new"
    assert_equal "$(version_in t-slurm-cluster-cpu-0 slurmd -V)" "$old"
    wait_for_nodes 1 mixed
    # The job from before is still known and running.
    assert_equal "$(job_state "$(cat "$BATS_FILE_TMPDIR/job")")" 'JobState=RUNNING ExitCode=0:0 '
    # The jail's $old commands talk to the $new controller; a new job runs on
    # a $old node, in the jail.
    run as_testuser 'srun -w t-slurm-cluster-cpu-1 cat /etc/slurm-jail-release'
    assert_success
    assert_output SLURM_JAIL_VERSION=0.1.0
}

@test "step 2: nodes, login and jail move to $new; the running job finishes, /home is kept, new jobs run" {
    local job
    job=$(cat "$BATS_FILE_TMPDIR/job")
    # Still running as the nodes' upgrade starts (50 s from its start; the
    # steps before take about 10, and once, under a full suite's load, 31:
    # the controller's replacement alone took 25), so the upgrade has a job
    # to wait for.
    assert_equal "$(job_state "$job")" 'JobState=RUNNING ExitCode=0:0 '
    run upgrade_to nodes.yaml --set-string slurm.release="$new"
    assert_success
    # Each old worker drained itself through the slurm.conf it started with
    # (the ConfigMap now holds the new release's), and the one running the
    # job waited for it.
    refute_output --partial 'scontrol failed'
    assert_output --partial 'node-lifecycle: t-slurm-cluster-cpu-0: drained, no jobs left'
    assert_output --partial 'node-lifecycle: t-slurm-cluster-cpu-1: drained, no jobs left'
    # Every pod runs a $new image.
    run kr get
    assert_success
    refute_line --regexp "slurm$old(,|\$)"
    wait_for_nodes 2
    assert_equal "$(version_in t-slurm-cluster-controller-0 slurmctld -V)" "$new"
    assert_equal "$(version_in t-slurm-cluster-cpu-0 slurmd -V)" "$new"
    assert_equal "$(version_in t-slurm-cluster-cpu-1 slurmd -V)" "$new"
    # The worker waited for the job it ran (drainGracePeriodSeconds).
    assert_equal "$(job_state "$job")" 'JobState=COMPLETED ExitCode=0:0 '
    # The $new jail was built as a generation beside the $old one, then
    # made live in one step.
    run kr logs job/t-slurm-cluster-populate-jail
    assert_output --partial 'upgrade: building generation 2 beside the live generation 1'
    assert_output --partial 'generation 2 of /mnt/jail is live'
    # slurm.conf names the job container the $new way.
    run ctl scontrol show config
    assert_line --regexp '^NamespaceType += namespace/slurm_jail$'
    # The login pod was replaced (same host key); the jail's commands are $new.
    make_known_hosts "$BATS_FILE_TMPDIR/install.yaml"
    run as_testuser "cat before-upgrade.txt across-$job.out; sinfo -V; srun -N2 cat /etc/slurm-jail-release | sort -u"
    assert_success
    assert_line kept
    assert_line 'finished on t-slurm-cluster-cpu-0'
    assert_line --regexp "^slurm(-wlm)? ${new//./\\.}\."
    assert_line SLURM_JAIL_VERSION=0.1.0
}
