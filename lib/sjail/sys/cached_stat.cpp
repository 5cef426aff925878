// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/cached_stat.hpp"

#include <fcntl.h>
#include <sys/sysmacros.h>

namespace sjail {

int stat_cached(int dir, const char *path, int flags, struct stat &st) noexcept {
    struct statx stx {};
    if (::statx(dir, path, flags | AT_STATX_DONT_SYNC, STATX_BASIC_STATS, &stx) != 0) {
        return -1;
    }
    st = {};
    st.st_dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
    st.st_ino = stx.stx_ino;
    st.st_mode = stx.stx_mode;
    st.st_nlink = stx.stx_nlink;
    st.st_uid = stx.stx_uid;
    st.st_gid = stx.stx_gid;
    st.st_rdev = makedev(stx.stx_rdev_major, stx.stx_rdev_minor);
    st.st_size = static_cast<off_t>(stx.stx_size);
    st.st_blksize = static_cast<blksize_t>(stx.stx_blksize);
    st.st_blocks = static_cast<blkcnt_t>(stx.stx_blocks);
    st.st_atim = {stx.stx_atime.tv_sec, stx.stx_atime.tv_nsec};
    st.st_mtim = {stx.stx_mtime.tv_sec, stx.stx_mtime.tv_nsec};
    st.st_ctim = {stx.stx_ctime.tv_sec, stx.stx_ctime.tv_nsec};
    return 0;
}

} // namespace sjail
