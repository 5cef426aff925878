// SPDX-License-Identifier: Apache-2.0
/* MPI_Allreduce of each rank's (rank + 1) across the job: prints the sum,
 * the world size and where each rank ran (tests/e2e/23-mpi.bats). */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int rank = 0;
    int size = 0;
    long mine = 0;
    long sum = 0;
    char host[256] = "";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    mine = rank + 1;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    gethostname(host, sizeof(host) - 1);
    printf("rank %d of %d on %s: sum %ld\n", rank, size, host, sum);
    MPI_Finalize();
    return 0;
}
