#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The multi-node NCCL check's command line and its submitter's --fabric mode,
# without a cluster: configuration errors name their fix before any run, and
# the one job across the nodes is what sbatch would get (sinfo replaced by a
# script, --dry-run). The runs themselves, on real Slurm with a real MPI
# program across four nodes: tests/e2e/38-nccl-fabric.bats.

load helpers
load ../lib/fake_scontrol

fabric() {
    run "$HEALTH_BIN/slurm-jail-nccl-fabric" --config /dev/null "$@"
}

# A slurm.conf that scontrol can expand host lists with (no daemon needed).
slurm_conf() {
    printf 'ClusterName=t\nSlurmctldHost=localhost\nNodeName=n[1-4]\nPartitionName=p Nodes=ALL\n' \
        >"$BATS_TEST_TMPDIR/slurm.conf"
    export SLURM_CONF=$BATS_TEST_TMPDIR/slurm.conf
}

@test "--help and the man page exist" {
    fabric --help
    assert_success
    assert_output --partial '--max-drain-fraction'
    assert_output --partial '--env'
    run man -l "$SLURM_JAIL_ROOT/health/man/slurm-jail-nccl-fabric.8"
    assert_success
    assert_output --partial 'every pair without it passed'
}

@test "outside a job it says where the nodes come from" {
    unset SLURM_JOB_NODELIST SLURM_JOB_ID
    fabric
    assert_failure 2
    assert_output 'slurm-jail-nccl-fabric: error: no SLURM_JOB_NODELIST: run inside a Slurm job across the nodes to test (sbatch --exclusive -N N, or slurm-jail-nccl-submit --fabric), or pass --nodelist NODES'
    fabric --nodelist 'n[1-3]'
    assert_failure 2
    assert_output --partial 'no SLURM_JOB_ID: '
}

@test "one node is no fabric; a missing pair threshold is named before any run" {
    slurm_conf
    fabric --nodelist n1 --jobid 7
    assert_failure 2
    assert_output "slurm-jail-nccl-fabric: error: 'n1' is 1 node(s): the fabric check needs 2 or more (3 or more to single out a node); submit it with -N 3 or more"
    fabric --nodelist 'n[1-3]' --jobid 7 --gpu-model 'Tesla V100' --gpus 8 --no-drain
    assert_failure 2
    assert_output "slurm-jail-nccl-fabric: error: no bandwidth threshold for 'Tesla V100' x8 on 2 nodes: add one, e.g. --threshold MODELx8x2=GBPS (threshold = ... in the [nccl-fabric] config section)"
}

@test "the drain fraction must be between 0 and 1" {
    fabric --max-drain-fraction 1.5
    assert_failure
    assert_output --partial '--max-drain-fraction: Value 1.5 not in range'
}

@test "nccl-submit --fabric: one exclusive job across the eligible nodes, with the [nccl-fabric] section" {
    local conf=$BATS_TEST_TMPDIR/health.conf sinfo=$BATS_TEST_TMPDIR/sinfo
    local scontrol # no reservations: no node held by the new-node gate
    scontrol=$(fake_scontrol)
    printf '#!/bin/sh\nprintf "n1|idle\\nn2|drained\\nn3|mixed\\nn4|idle\\n"\n' >"$sinfo"
    chmod +x "$sinfo"
    printf '[nccl-fabric]\nmax-drain-fraction = 0.5\nenv = NCCL_IB_HCA=mlx5_0\n[nccl-check]\ntimeout = 600\n' >"$conf"
    run "$HEALTH_BIN/slurm-jail-nccl-submit" --config "$conf" --sinfo "$sinfo" --scontrol "$scontrol" --dry-run --fabric -- --drain-after 2
    assert_success
    assert_line 'skip n2: state drained'
    assert_line "dry-run: would submit for 3 nodes: sbatch --exclusive --nodes=3 --nodelist=n1,n3,n4 --job-name=slurm-jail-nccl-fabric --wrap=exec '/usr/sbin/slurm-jail-nccl-fabric' '--max-drain-fraction=0.5' '--env=NCCL_IB_HCA=mlx5_0' '--drain-after' '2'"
    assert_line 'would submit 1 job(s), skipped 1 node(s)'
    # Fewer than two nodes that can take the job: nothing to compare.
    printf '#!/bin/sh\nprintf "n1|idle\\nn2|drained\\n"\n' >"$sinfo"
    run "$HEALTH_BIN/slurm-jail-nccl-submit" --config /dev/null --sinfo "$sinfo" --scontrol "$scontrol" --dry-run --fabric
    assert_failure 2
    assert_line 'slurm-jail-nccl-submit: error: 1 node(s) can take a job now: the fabric check needs 2 or more (3 or more to single out a node)'
}
