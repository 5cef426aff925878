// SPDX-License-Identifier: Apache-2.0
/* MPI_Allreduce of each rank's (rank + 1) across the job: prints the sum,
 * the world size and where each rank ran (tests/e2e/23-mpi.bats). With
 * --shared-maps, also the shared files the rank has mapped that the MPI and
 * PMIx libraries share with other processes: the PMIx server's data store
 * and files in /dev/shm.
 *
 * MPI_Finalize is bounded: Debian 12's MPICH 4.0.2 closes its UCX endpoints
 * before its PMI barrier, and over TCP one rank can wait for ever on a peer
 * already in that barrier (one run in 10 to 40 on a loaded machine; later
 * MPICH releases hold the barrier first). The sums are printed before it, so
 * such a hang ends the rank after FINALIZE_LIMIT_S seconds, saying so,
 * instead of holding the step to its time limit. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

enum { FINALIZE_LIMIT_S = 5 };

static void finalize_hung(int sig) {
    static const char note[] =
        "MPI_Finalize did not return in time (MPICH 4.0.2 over TCP): ending\n";
    (void)sig;
    (void)!write(STDERR_FILENO, note, sizeof(note) - 1);
    _exit(0);
}

static int shared_with_others(const char *path) {
    return strstr(path, "/pmix_dstor_") != NULL || strncmp(path, "/dev/shm/", 9) == 0;
}

static void print_shared_maps(int rank) {
    char line[4096];
    FILE *maps = fopen("/proc/self/maps", "r");
    if (maps == NULL) {
        perror("/proc/self/maps");
        return;
    }
    while (fgets(line, sizeof(line), maps) != NULL) {
        const char *path = strchr(line, '/');
        if (path != NULL && shared_with_others(path)) {
            printf("rank %d maps %s", rank, path);
        }
    }
    fclose(maps);
}

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
    if (argc > 1 && strcmp(argv[1], "--shared-maps") == 0) {
        print_shared_maps(rank);
    }
    fflush(stdout);
    signal(SIGALRM, finalize_hung);
    alarm(FINALIZE_LIMIT_S);
    MPI_Finalize();
    return 0;
}
