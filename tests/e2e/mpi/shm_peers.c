// SPDX-License-Identifier: Apache-2.0
/* Two tasks of one job step on a node share memory as NCCL's node-local
 * transports do (tests/e2e/23-mpi.bats): task 0 makes a file in /dev/shm
 * (NCCL's SHM transport, "nccl-XXXXXX"), and a memory file whose descriptor
 * it passes over an abstract Unix socket (how NCCL's P2P transport passes a
 * CUDA memory handle between processes); task 1 opens the first by name,
 * maps both, checks what task 0 wrote and answers through the shared file.
 * Each task prints one line of what it saw. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

enum { kSize = 4096, kTries = 200 };

static const char kFromZero[] = "written by task 0";
static const char kFromOne[] = "answered by task 1";

static int fail(const char *what) {
    fprintf(stderr, "task %s: %s: %s\n", getenv("SLURM_PROCID"), what, strerror(errno));
    return 1;
}

/* The abstract socket address both tasks name: unique to the job step. */
static socklen_t socket_address(struct sockaddr_un *addr) {
    memset(addr, 0, sizeof(*addr));
    addr->sun_family = AF_UNIX;
    int n = snprintf(addr->sun_path + 1, sizeof(addr->sun_path) - 1, "/tmp/nccl-like-%s.%s",
                     getenv("SLURM_JOB_ID"), getenv("SLURM_STEP_ID"));
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

static char *map(int fd) {
    void *at = mmap(NULL, kSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    return at == MAP_FAILED ? NULL : at;
}

/* Sends `name` with the descriptor `fd` attached (SCM_RIGHTS). */
static int send_name_and_fd(int sock, const char *name, int fd) {
    char control[CMSG_SPACE(sizeof(int))] = {0};
    struct iovec iov = {(void *)name, strlen(name) + 1};
    struct msghdr msg = {.msg_iov = &iov,
                         .msg_iovlen = 1,
                         .msg_control = control,
                         .msg_controllen = sizeof(control)};
    struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
    return sendmsg(sock, &msg, 0) < 0 ? -1 : 0;
}

static int receive_name_and_fd(int sock, char *name, size_t size, int *fd) {
    char control[CMSG_SPACE(sizeof(int))] = {0};
    struct iovec iov = {name, size};
    struct msghdr msg = {.msg_iov = &iov,
                         .msg_iovlen = 1,
                         .msg_control = control,
                         .msg_controllen = sizeof(control)};
    if (recvmsg(sock, &msg, 0) <= 0) {
        return -1;
    }
    struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
    if (cmsg == NULL || cmsg->cmsg_type != SCM_RIGHTS) {
        errno = EPROTO;
        return -1;
    }
    memcpy(fd, CMSG_DATA(cmsg), sizeof(int));
    return 0;
}

static int task_zero(void) {
    char path[] = "/dev/shm/nccl-XXXXXX";
    int shm = mkstemp(path);
    int mem = memfd_create("nccl-like-handle", MFD_CLOEXEC);
    if (shm < 0 || mem < 0 || ftruncate(shm, kSize) != 0 || ftruncate(mem, kSize) != 0) {
        return fail("making the shared files");
    }
    char *shared = map(shm);
    char *handle = map(mem);
    if (shared == NULL || handle == NULL) {
        return fail("mmap");
    }
    strcpy(shared, kFromZero);
    strcpy(handle, kFromZero);
    struct sockaddr_un addr;
    socklen_t len = socket_address(&addr);
    int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listener < 0 || bind(listener, (struct sockaddr *)&addr, len) != 0 ||
        listen(listener, 1) != 0) {
        return fail("listening on the abstract socket");
    }
    int peer = accept(listener, NULL, NULL);
    if (peer < 0 || send_name_and_fd(peer, path + strlen("/dev/shm/"), mem) != 0) {
        return fail("passing the name and the descriptor");
    }
    char done = 0;
    if (read(peer, &done, 1) != 1) {
        return fail("waiting for task 1");
    }
    unlink(path);
    printf("task 0: task 1 answered through /dev/shm: %s\n",
           strcmp(shared + 64, kFromOne) == 0 ? "yes" : "no");
    return 0;
}

static int task_one(void) {
    struct sockaddr_un addr;
    socklen_t len = socket_address(&addr);
    int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int tries = 0;
    while (connect(sock, (struct sockaddr *)&addr, len) != 0) {
        if (++tries == kTries) {
            return fail("connecting to task 0's abstract socket");
        }
        usleep(50 * 1000);
    }
    char name[64] = "";
    int mem = -1;
    if (receive_name_and_fd(sock, name, sizeof(name) - 1, &mem) != 0) {
        return fail("receiving the name and the descriptor");
    }
    char path[128];
    snprintf(path, sizeof(path), "/dev/shm/%s", name);
    int shm = open(path, O_RDWR | O_CLOEXEC);
    if (shm < 0) {
        return fail(path);
    }
    char *shared = map(shm);
    char *handle = map(mem);
    if (shared == NULL || handle == NULL) {
        return fail("mmap");
    }
    printf("task 1: /dev/shm file by name: %s; descriptor over the abstract socket: %s\n",
           strcmp(shared, kFromZero) == 0 ? "shared" : "not shared",
           strcmp(handle, kFromZero) == 0 ? "shared" : "not shared");
    strcpy(shared + 64, kFromOne);
    return write(sock, "k", 1) == 1 ? 0 : fail("answering task 0");
}

int main(void) {
    const char *rank = getenv("SLURM_PROCID");
    if (rank == NULL || getenv("SLURM_JOB_ID") == NULL || getenv("SLURM_STEP_ID") == NULL) {
        fprintf(stderr, "run it as two tasks of a job step (srun -n2)\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IONBF, 0);
    return strcmp(rank, "0") == 0 ? task_zero() : task_one();
}
