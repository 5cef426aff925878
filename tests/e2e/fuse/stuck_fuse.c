// SPDX-License-Identifier: Apache-2.0
// A FUSE filesystem that never answers, as a hostile or broken user's job
// has it: `stuck_fuse hang|stop DIR` makes a user and mount namespace of
// its own (as rootless container tools do), mounts FUSE on DIR over
// /dev/fuse, answers the kernel's INIT, then forks a reader that looks
// up DIR/x. The daemon reads that request and never answers it: with
// "hang" it waits for ever, with "stop" it stops itself (SIGSTOP). The
// reader keeps its copy of the /dev/fuse descriptor, as a daemon's forked
// workers do, so the connection outlives the daemon: once the request is
// read, only aborting the connection ends the reader's wait, SIGKILL
// included. Prints "blocked READER_PID" when the reader waits.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static void die(const char *what) {
    fprintf(stderr, "stuck_fuse: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void write_file(const char *path, const char *text) {
    int fd = open(path, O_WRONLY);
    if (fd < 0 || write(fd, text, strlen(text)) < 0) {
        die(path);
    }
    close(fd);
}

// Root of a user namespace of its own, mapped to the caller's ids.
static void own_namespaces(void) {
    char map[64];
    uid_t uid = getuid();
    gid_t gid = getgid();
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) {
        die("unshare");
    }
    write_file("/proc/self/setgroups", "deny");
    snprintf(map, sizeof(map), "0 %u 1", (unsigned)uid);
    write_file("/proc/self/uid_map", map);
    snprintf(map, sizeof(map), "0 %u 1", (unsigned)gid);
    write_file("/proc/self/gid_map", map);
}

static char request[1 << 17];

static struct fuse_in_header *read_request(int fuse) {
    ssize_t n = read(fuse, request, sizeof(request));
    if (n < (ssize_t)sizeof(struct fuse_in_header)) {
        die("read /dev/fuse");
    }
    return (struct fuse_in_header *)request;
}

static void answer_init(int fuse) {
    struct fuse_in_header *in = read_request(fuse);
    struct fuse_init_in *init = (struct fuse_init_in *)(in + 1);
    struct fuse_init_out out = {.major = FUSE_KERNEL_VERSION,
                                .minor = FUSE_KERNEL_MINOR_VERSION,
                                .max_readahead = init->max_readahead,
                                .max_write = 4096};
    struct fuse_out_header head = {.len = sizeof(head) + sizeof(out), .unique = in->unique};
    struct iovec parts[2] = {{&head, sizeof(head)}, {&out, sizeof(out)}};
    if (in->opcode != FUSE_INIT || writev(fuse, parts, 2) < 0) {
        die("answering FUSE_INIT");
    }
}

int main(int argc, char **argv) {
    if (argc != 3 || (strcmp(argv[1], "hang") != 0 && strcmp(argv[1], "stop") != 0)) {
        fprintf(stderr, "usage: stuck_fuse hang|stop DIR\n");
        return 2;
    }
    const char *dir = argv[2];
    char options[128];
    own_namespaces();
    (void)mkdir(dir, 0700);
    int fuse = open("/dev/fuse", O_RDWR);
    if (fuse < 0) {
        die("open /dev/fuse");
    }
    snprintf(options, sizeof(options), "fd=%d,rootmode=40000,user_id=0,group_id=0", fuse);
    if (mount("stuck", dir, "fuse.stuck", MS_NOSUID | MS_NODEV, options) != 0) {
        die("mount");
    }
    answer_init(fuse);
    pid_t reader = fork();
    if (reader == 0) {
        char path[4096];
        struct stat st;
        snprintf(path, sizeof(path), "%s/x", dir);
        (void)stat(path, &st);
        _exit(0);
    }
    if (reader < 0) {
        die("fork");
    }
    (void)read_request(fuse); // the reader's lookup: never answered
    printf("blocked %d\n", (int)reader);
    fflush(stdout);
    if (strcmp(argv[1], "stop") == 0) {
        raise(SIGSTOP);
    }
    for (;;) {
        pause();
    }
}
