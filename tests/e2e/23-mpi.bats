#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# A job's tasks working together. MPI jobs across both nodes, an allreduce
# whose result every rank checks: MPICH through Slurm's PMI2 server (srun
# --mpi=pmi2) and Open MPI through its PMIx server (srun --mpi=pmix), both
# in the jail. And the node-local ways NCCL's transports share memory
# between a step's tasks (NCCL itself needs two GPUs).

setup_file() {
    load helpers
    use_cluster
    MPI_DIR=$HOST_HOME/e2e-mpi
    rm -rf "$MPI_DIR"
    install -d -o "$TEST_UID" -g "$TEST_UID" "$MPI_DIR"
    # Built on the host against Debian's MPICH and Open MPI (each by its own
    # compiler wrapper: mpicc is whichever was installed last); the jail has
    # the same libmpich12 and libopenmpi3.
    mpicc.mpich -O2 -o "$MPI_DIR/allreduce" "$BATS_TEST_DIRNAME/mpi/allreduce.c"
    mpicc.openmpi -O2 -o "$MPI_DIR/allreduce-ompi" "$BATS_TEST_DIRNAME/mpi/allreduce.c"
    gcc -std=c11 -O2 -o "$MPI_DIR/shm_peers" "$BATS_TEST_DIRNAME/mpi/shm_peers.c"
    chown "$TEST_UID:$TEST_UID" "$MPI_DIR/allreduce" "$MPI_DIR/allreduce-ompi" "$MPI_DIR/shm_peers"
}

setup() {
    load helpers
    load_assertions
}

@test "the jail has MPICH's and Open MPI's runtimes for the programs" {
    run ush "ldd e2e-mpi/allreduce"
    assert_success
    assert_output --regexp 'libmpich\.so\.12 => /'
    refute_output --partial 'not found'
    run ush "ldd e2e-mpi/allreduce-ompi"
    assert_success
    assert_output --regexp 'libmpi\.so\.40 => /'
    refute_output --partial 'not found'
}

# Each run takes about a second; a time limit of one minute (Slurm's least)
# makes a hang fail here instead of holding the suite for the test timeout.
# The program bounds MPICH 4.0.2's own MPI_Finalize hang over TCP (see
# mpi/allreduce.c), which comes after the sums it prints.
@test "srun --mpi=pmi2 -N2 -n2: an allreduce across two nodes gives the right sum" {
    run ush "srun --time=1 --mpi=pmi2 -N2 -n2 e2e-mpi/allreduce"
    assert_success
    assert_line 'rank 0 of 2 on node1: sum 3'
    assert_line 'rank 1 of 2 on node2: sum 3'
}

# UCX limited to its System V shared memory transport: the four tasks reach
# each other only because they share the job's IPC namespace.
@test "srun --mpi=pmi2 -N1 -n4 over System V shared memory: the job's tasks on a node share one IPC namespace" {
    run ush "UCX_TLS=sysv,self srun --time=1 --mpi=pmi2 -N1 -n4 -w node1 e2e-mpi/allreduce"
    assert_success
    assert_equal "$(grep -c ' on node1: sum 10$' <<<"$output")" 4
}

# Several ranks per node on two nodes is not run with Debian 12's MPICH
# 4.0.2: its MPI_Finalize closes the UCX endpoints before its PMI barrier, and
# over TCP a rank can wait for ever on a peer already in the barrier (here
# without the job's IPC namespace too, with UCX_TLS=tcp,self: 3 runs of 15).
# The local cluster's nodes are one machine, and before jobs had IPC
# namespaces of their own UCX reached the other node through System V shared
# memory, which hid it; on a cluster the nodes talk over the network.

@test "srun --mpi=pmix -N2 -n2: Open MPI's allreduce across two nodes gives the right sum" {
    run ush "srun --time=1 --mpi=pmix -N2 -n2 e2e-mpi/allreduce-ompi"
    assert_success
    assert_line 'rank 0 of 2 on node1: sum 3'
    assert_line 'rank 1 of 2 on node2: sum 3'
}

# Open MPI limited to its shared memory transport (vader) between the four
# tasks. Each rank maps its segment in the job's /dev/shm and the PMIx data
# store that slurmstepd's PMIx server, on the node's root, writes in the
# node's Slurm spool (bound into the jail at the same path).
@test "srun --mpi=pmix -N1 -n4 over shared memory: the tasks share the job's /dev/shm and the PMIx server's data store" {
    run ush "OMPI_MCA_btl=self,vader srun --time=1 --mpi=pmix -N1 -n4 -w node1 e2e-mpi/allreduce-ompi --shared-maps"
    assert_success
    assert_equal "$(grep -c ' on node1: sum 10$' <<<"$output")" 4
    local rank
    for rank in 0 1 2 3; do
        assert_output --regexp "rank $rank maps /dev/shm/vader_segment\.node1\."
        assert_output --regexp "rank $rank maps /var/spool/slurmd/pmix\.[0-9]+\.0/pmix_dstor_ds21_[0-9]+/smdataseg-"
    done
}

# NCCL's SHM transport opens a file of /dev/shm by name in the peer; its P2P
# transport passes a CUDA memory handle as a descriptor over an abstract
# Unix socket. Both between two tasks of one step, in the job's /dev/shm.
@test "two tasks of a step share memory as NCCL's node-local transports do: a /dev/shm file by name, a descriptor over an abstract socket" {
    run ush "srun --time=1 -N1 -n2 -w node1 e2e-mpi/shm_peers"
    assert_success
    assert_line 'task 1: /dev/shm file by name: shared; descriptor over the abstract socket: shared'
    assert_line 'task 0: task 1 answered through /dev/shm: yes'
}
