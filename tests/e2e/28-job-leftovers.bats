#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Nothing of a job outlives it on a node, whatever ends it: a job epilog that
# runs without chroot.so (plugstack.conf changed between the job's steps and
# its end, as the benchmarks' A/B switch does), or the cluster torn down.
# The cluster runs chroot.so alone (SPANK only, the benchmarks' setup) with
# PrologFlags=Contain for this file, and is restored afterwards.

# here: the settings of this file's cluster; up_here: the cluster up with them.
here=(SLURM_JAIL_LOCAL_JOB_CONTAINER=no SLURM_JAIL_LOCAL_CONTAIN=yes)
up_here() { use_cluster "${here[@]}"; }

setup_file() {
    load helpers
    use_cluster "${here[@]}"
}


setup() {
    load helpers
    setup_job_test
    PLUGSTACK=$STATE/etc/plugstack.conf
    cp "$PLUGSTACK" "$BATS_TEST_TMPDIR/plugstack.conf"
}

teardown() {
    install -m 0644 "$BATS_TEST_TMPDIR/plugstack.conf" "$PLUGSTACK.new"
    mv -f "$PLUGSTACK.new" "$PLUGSTACK"
    cancel_test_jobs
    if [ -n "${FAKE_PID:-}" ]; then kill "$FAKE_PID" 2>/dev/null || true; fi
    if [ -n "${FAKE_ENTRY:-}" ]; then rm -f "$FAKE_ENTRY"; fi
    rm -rf "${FAKE_STATE:-/nonexistent}"
}

# The job's init on NODE, as "PID STARTTIME" (chroot.so's record).
job_init_of() { cat "$(job_state_dir "$1" "$2")/init"; }

# init_alive "PID STARTTIME": that very process still runs (not a zombie).
init_alive() {
    local pid start
    read -r pid start <<<"$1"
    [ "$(awk '{ sub(/^.*\) /, ""); if ($1 != "Z") print $20 }' "/proc/$pid/stat" 2>/dev/null)" = "$start" ]
}

@test "a job whose epilog runs without chroot.so leaves no init, mount or jobs/ entry" {
    run ush "sbatch --parsable -w node1 -o $T/job.out --wrap 'srun true; echo stepped; sleep 4'"
    assert_success
    local job=$output init
    wait_until 30 grep -q stepped "$HOST_HOME/$T/job.out"
    init=$(job_init_of node1 "$job")
    init_alive "$init"
    # The job's epilog will run without chroot.so.
    set_plugstack "# chroot.so off"
    wait_until 30 bash -c "[ -z \"\$('$LC' run -- squeue -h -j $job 2>/dev/null)\" ]"
    set_plugstack "$(cat "$BATS_TEST_TMPDIR/plugstack.conf")"
    # The init notices that its job is gone and deletes it.
    wait_until 60 test ! -e "$(job_state_dir node1 "$job")"
    wait_until 10 bash -c "$(declare -f init_alive); ! init_alive '$init'"
    run node_mounts node1
    refute_output --partial "/run/slurm-jail/jobs/$job/"
}

@test "a job that ends within a second of its first step, its epilog without chroot.so, leaves nothing either" {
    # The benchmarks' A/B switch: chroot.so is switched off right after a
    # short job's only step, before its job epilog runs. Its init has to know
    # at once that the job has an extern step (PrologFlags=Contain), or it
    # would wait an hour for the job's next step.
    run ush "sbatch --parsable -w node1 -o $T/short.out --wrap 'echo stepped; sleep 1'"
    assert_success
    local job=$output
    wait_until 30 grep -q stepped "$HOST_HOME/$T/short.out"
    set_plugstack "# chroot.so off"
    wait_until 30 bash -c "[ -z \"\$('$LC' run -- squeue -h -j $job 2>/dev/null)\" ]"
    set_plugstack "$(cat "$BATS_TEST_TMPDIR/plugstack.conf")"
    wait_until 60 test ! -e "$(job_state_dir node1 "$job")"
}

@test "local-cluster down ends every job's init and removes what the jobs left" {
    run ush "sbatch --parsable -N2 -o /dev/null --wrap 'srun sleep 922'"
    assert_success
    local job=$output inits=()
    wait_until 30 test -s "$(job_state_dir node1 "$job")/init"
    wait_until 30 test -s "$(job_state_dir node2 "$job")/init"
    inits=("$(job_init_of node1 "$job")" "$(job_init_of node2 "$job")")
    run "$LC" down
    assert_success
    local i
    for i in "${inits[@]}"; do
        wait_until 10 bash -c "$(declare -f init_alive); ! init_alive '$i'"
    done
    run job_state_entries
    assert_output ''
    up_here
}

@test "local-cluster down keeps the shared test users while another local cluster with them is up" {
    # Another cluster, as its registration and its running slurmctld show it.
    FAKE_STATE=$(mktemp -d /tmp/e2e-other-cluster.XXXXXX)
    install -d "$FAKE_STATE/ctld"
    sleep 600 &
    FAKE_PID=$!
    echo "$FAKE_PID" >"$FAKE_STATE/ctld/slurmctld.pid"
    FAKE_ENTRY=/run/slurm-jail-local-clusters/e2e-other-$$
    install -d /run/slurm-jail-local-clusters
    printf '%s\n%s\n' "$FAKE_STATE" "$LC_USERS" >"$FAKE_ENTRY"
    run "$LC" down
    assert_success
    assert_output --partial "keeping the host users"
    run getent passwd "$TEST_USER"
    assert_success
    run getent passwd "$OTHER_USER"
    assert_success
    # Once the other one is down, the last down removes them.
    kill "$FAKE_PID"
    wait "$FAKE_PID" 2>/dev/null || true
    up_here
    run "$LC" down
    assert_success
    # (Unless someone else's local cluster runs on this machine meanwhile.)
    if ! pgrep -f '^slurmctld -c -f /etc/slurm/slurm.conf$' >/dev/null; then
        run getent passwd "$TEST_USER"
        assert_failure
        run getent passwd "$OTHER_USER"
        assert_failure
    fi
    up_here
}
