#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# An MPI job across both nodes: MPICH in the jail, Slurm's PMI2 server
# (srun --mpi=pmi2), an allreduce whose result every rank checks.

setup_file() {
    load helpers
    MPI_DIR=$HOST_HOME/e2e-mpi
    rm -rf "$MPI_DIR"
    install -d -o "$TEST_UID" -g "$TEST_UID" "$MPI_DIR"
    # Built on the host against Debian's MPICH; the jail has the same libmpich12.
    mpicc -O2 -o "$MPI_DIR/allreduce" "$BATS_TEST_DIRNAME/mpi/allreduce.c"
    chown "$TEST_UID:$TEST_UID" "$MPI_DIR/allreduce"
}

setup() {
    load helpers
    load_assertions
}

@test "the jail has MPICH's runtime for the program" {
    run ush "ldd e2e-mpi/allreduce"
    assert_success
    assert_output --regexp 'libmpich\.so\.12 => /'
    refute_output --partial 'not found'
}

# Each run takes about a second; a time limit of one minute (Slurm's least)
# makes a hang (once seen in MPI_Finalize, under a full suite's load) fail
# here instead of holding the suite for the test timeout.
@test "srun --mpi=pmi2 -N2 -n2: an allreduce across two nodes gives the right sum" {
    run ush "srun --time=1 --mpi=pmi2 -N2 -n2 e2e-mpi/allreduce"
    assert_success
    assert_line 'rank 0 of 2 on node1: sum 3'
    assert_line 'rank 1 of 2 on node2: sum 3'
}

@test "srun --mpi=pmi2 -N2 -n8: four ranks per node, sum 1..8" {
    run ush "srun --time=1 --mpi=pmi2 -N2 -n8 --ntasks-per-node=4 e2e-mpi/allreduce"
    assert_success
    assert_equal "$(grep -c ': sum 36$' <<<"$output")" 8
    assert_equal "$(grep -c ' on node1: ' <<<"$output")" 4
    assert_equal "$(grep -c ' on node2: ' <<<"$output")" 4
}
