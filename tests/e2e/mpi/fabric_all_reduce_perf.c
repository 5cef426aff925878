// SPDX-License-Identifier: Apache-2.0
/* A stand-in for an MPI build of nccl-tests' all_reduce_perf, one rank per
 * (fake) GPU, for the multi-node NCCL check (tests/e2e/38-nccl-fabric.bats).
 * The ranks of the step really agree over MPI (Open MPI through srun's PMIx):
 * an MPI_Allreduce of every rank's number, checked against the expected sum
 * (a wrong sum is printed as #wrong), and one of how many ranks run on a
 * node whose own spool holds the marker file DEGRADED (the test plants it in
 * the node's SlurmdSpoolDir, which only that node's jobs see). Rank 0 then
 * prints all_reduce_perf's report of one 8 GiB row: busbw 40.00 GB/s, or
 * 5.00 when a degraded node is in the group, with every rank's node listed
 * as the real one lists its devices, and the NCCL_IB_HCA it was given.
 *
 * MPI_Finalize is bounded as in allreduce.c: on this machine's namespaced
 * nodes it can hang over TCP after the report (three nodes of four, now and
 * then), so the report is flushed first and a hang ends the rank after
 * FINALIZE_LIMIT_S seconds. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEGRADED "/var/spool/slurmd/e2e-fabric-degraded"
enum { NAME_LEN = 64, FINALIZE_LIMIT_S = 5 };

static void finalize_hung(int sig) {
    static const char note[] = "MPI_Finalize did not return in time: ending\n";
    (void)sig;
    (void)!write(STDERR_FILENO, note, sizeof(note) - 1);
    _exit(0);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0;
    int size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char host[NAME_LEN] = "";
    (void)gethostname(host, sizeof(host) - 1);
    int mine[2] = {rank + 1, access(DEGRADED, F_OK) == 0};
    int sums[2] = {0, 0};
    MPI_Allreduce(mine, sums, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    char hosts[64][NAME_LEN];
    memset(hosts, 0, sizeof(hosts));
    if (size <= 64) {
        MPI_Gather(host, NAME_LEN, MPI_CHAR, hosts, NAME_LEN, MPI_CHAR, 0, MPI_COMM_WORLD);
    }
    if (rank == 0) {
        const int wrong = sums[0] != size * (size + 1) / 2;
        const double busbw = sums[1] > 0 ? 5.0 : 40.0;
        const double algbw = size > 1 ? busbw * size / (2.0 * (size - 1)) : busbw;
        printf("# nccl-tests version 2.19.6 (slurm-jail fake, MPI) nccl-headers=22809 "
               "nccl-library=22809\n# Collective test starting: all_reduce_perf\n"
               "# nThread 1 nGpus 1 minBytes 8589934592 maxBytes 8589934592 step: 2(factor) "
               "warmup iters: 1 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0\n#\n"
               "# Using devices\n");
        for (int r = 0; r < size && r < 64; ++r) {
            printf("#  Rank %2d Group  0 Pid      1 on %10s device  0 [0000:00:06] NVIDIA H200\n",
                   r, hosts[r]);
        }
        const char *hca = getenv("NCCL_IB_HCA");
        printf("# NCCL_IB_HCA=%s\n", hca == NULL ? "(unset)" : hca);
        printf("#\n#                                                              out-of-place"
               "                       in-place          \n"
               "#       size         count      type   redop    root     time   algbw   busbw "
               " #wrong     time   algbw   busbw  #wrong \n"
               "#        (B)    (elements)                               (us)  (GB/s)  (GB/s) "
               "            (us)  (GB/s)  (GB/s)         \n"
               "  8589934592    2147483648     float     sum      -1  %7.1f  %6.2f  %6.2f  "
               "%6d  %7.1f  %6.2f  %6.2f  %6d\n"
               "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : %.2f \n#\n"
               "# Collective test concluded: all_reduce_perf\n#\n",
               8589934592.0 / algbw / 1e3, algbw, busbw, wrong, 8589934592.0 / algbw / 1e3, algbw,
               busbw, wrong, busbw);
    }
    fflush(stdout);
    signal(SIGALRM, finalize_hung);
    alarm(FINALIZE_LIMIT_S);
    MPI_Finalize();
    return 0;
}
