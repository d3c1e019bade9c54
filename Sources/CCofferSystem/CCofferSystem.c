#define _GNU_SOURCE
#include "CCofferSystem.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__linux__)
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#endif

int coffer_open_folder_for_lookup(int dirfd, const char *name) {
#ifdef O_PATH
    return openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
#else
    return openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
#endif
}

int coffer_openat2(int dirfd, const char *path, uint64_t flags, uint64_t mode, uint64_t resolve) {
#if defined(__linux__) && defined(SYS_openat2)
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = flags;
    how.mode = mode;
    how.resolve = resolve;
    return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof how);
#else
    (void)dirfd; (void)path; (void)flags; (void)mode; (void)resolve;
    errno = ENOSYS;
    return -1;
#endif
}

int coffer_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags) {
#if defined(__linux__) && defined(SYS_renameat2)
    return (int)syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, flags);
#else
    if (flags == 0) return renameat(olddirfd, oldpath, newdirfd, newpath);
    errno = ENOSYS;
    return -1;
#endif
}

ssize_t coffer_copy_file_range(int fd_in, int fd_out, size_t length) {
#if defined(__linux__)
    return copy_file_range(fd_in, NULL, fd_out, NULL, length, 0);
#else
    (void)fd_in; (void)fd_out; (void)length;
    errno = ENOSYS;
    return -1;
#endif
}

static void fill_from_stat(const struct stat *st, coffer_stat *out) {
    memset(out, 0, sizeof *out);
    out->mode = st->st_mode;
    out->size = (uint64_t)st->st_size;
    out->mtime_sec = st->st_mtim.tv_sec;
    out->mtime_nsec = (uint32_t)st->st_mtim.tv_nsec;
    out->inode = st->st_ino;
    out->device = st->st_dev;
    out->nlink = (uint32_t)st->st_nlink;
    out->ctime_sec = st->st_ctim.tv_sec;
    out->ctime_nsec = (uint32_t)st->st_ctim.tv_nsec;
    out->atime_sec = st->st_atim.tv_sec;
    out->atime_nsec = (uint32_t)st->st_atim.tv_nsec;
}

static int statx_with_flags(int dirfd, const char *name, int flags, coffer_stat *out) {
#if defined(__linux__) && defined(STATX_BTIME)
    struct statx sx;
    int r = statx(dirfd, name, flags | AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT,
                  STATX_TYPE | STATX_MODE | STATX_SIZE | STATX_MTIME | STATX_CTIME | STATX_ATIME | STATX_BTIME | STATX_INO
                  | STATX_NLINK, &sx);
    if (r == 0) {
        memset(out, 0, sizeof *out);
        out->mode = sx.stx_mode;
        out->size = sx.stx_size;
        out->mtime_sec = sx.stx_mtime.tv_sec;
        out->mtime_nsec = sx.stx_mtime.tv_nsec;
        out->has_btime = (sx.stx_mask & STATX_BTIME) ? 1 : 0;
        out->btime_sec = sx.stx_btime.tv_sec;
        out->btime_nsec = sx.stx_btime.tv_nsec;
        out->inode = sx.stx_ino;
        out->device = ((uint64_t)sx.stx_dev_major << 32) | sx.stx_dev_minor;
        out->nlink = sx.stx_nlink;
        out->ctime_sec = sx.stx_ctime.tv_sec;
        out->ctime_nsec = sx.stx_ctime.tv_nsec;
        out->atime_sec = sx.stx_atime.tv_sec;
        out->atime_nsec = sx.stx_atime.tv_nsec;
        return 0;
    }
    if (errno != ENOSYS) return -1;
#endif
    struct stat st;
    if (fstatat(dirfd, name, &st, flags | AT_SYMLINK_NOFOLLOW) != 0) return -1;
    fill_from_stat(&st, out);
    return 0;
}

int coffer_statx(int dirfd, const char *name, coffer_stat *out) {
    return statx_with_flags(dirfd, name, 0, out);
}

int coffer_fstat(int fd, coffer_stat *out) {
    return statx_with_flags(fd, "", AT_EMPTY_PATH, out);
}

#if defined(__linux__)
#ifndef SYS_getxattrat
#define SYS_getxattrat 464
#endif
struct coffer_xattr_args {
    uint64_t value;
    uint32_t size;
    uint32_t flags;
};
static int getxattrat_missing = 0;
#endif

ssize_t coffer_getxattr_at(int dirfd, const char *name, const char *attribute, void *value, size_t size) {
#if defined(__linux__)
    if (!getxattrat_missing) {
        struct coffer_xattr_args args = { (uint64_t)(uintptr_t)value, (uint32_t)size, 0 };
        ssize_t r = syscall(SYS_getxattrat, dirfd, name, AT_SYMLINK_NOFOLLOW, attribute, &args, sizeof args);
        if (r >= 0 || (errno != ENOSYS && errno != EINVAL)) return r;
        getxattrat_missing = 1;
    }
    char path[64 + 4096];
    int n = snprintf(path, sizeof path, "/proc/self/fd/%d/%s", dirfd, name);
    if (n < 0 || (size_t)n >= sizeof path) { errno = ENAMETOOLONG; return -1; }
    return lgetxattr(path, attribute, value, size);
#else
    (void)dirfd; (void)name; (void)attribute; (void)value; (void)size;
    errno = ENOTSUP;
    return -1;
#endif
}

int coffer_fsetxattr(int fd, const char *attribute, const void *value, size_t size, int flags) {
#if defined(__linux__)
    return fsetxattr(fd, attribute, value, size, flags);
#else
    (void)fd; (void)attribute; (void)value; (void)size; (void)flags;
    errno = ENOTSUP;
    return -1;
#endif
}

ssize_t coffer_fgetxattr(int fd, const char *attribute, void *value, size_t size) {
#if defined(__linux__)
    return fgetxattr(fd, attribute, value, size);
#else
    (void)fd; (void)attribute; (void)value; (void)size;
    errno = ENOTSUP;
    return -1;
#endif
}

ssize_t coffer_flistxattr(int fd, char *list, size_t size) {
#if defined(__linux__)
    return flistxattr(fd, list, size);
#else
    (void)fd; (void)list; (void)size;
    errno = ENOTSUP;
    return -1;
#endif
}

int coffer_fremovexattr(int fd, const char *attribute) {
#if defined(__linux__)
    return fremovexattr(fd, attribute);
#else
    (void)fd; (void)attribute;
    errno = ENOTSUP;
    return -1;
#endif
}

int coffer_set_mtime(int fd, int64_t sec, uint32_t nsec) {
    struct timespec times[2];
    times[0].tv_sec = 0;
    times[0].tv_nsec = UTIME_OMIT;
    times[1].tv_sec = (time_t)sec;
    times[1].tv_nsec = (long)nsec;
    return futimens(fd, times);
}

struct coffer_dir {
    DIR *dir;
};

coffer_dir *coffer_opendir(int dirfd) {
    int copy = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
    if (copy < 0) return NULL;
    DIR *d = fdopendir(copy);
    if (!d) { int saved = errno; close(copy); errno = saved; return NULL; }
    rewinddir(d);
    coffer_dir *wrapper = malloc(sizeof *wrapper);
    if (!wrapper) { closedir(d); errno = ENOMEM; return NULL; }
    wrapper->dir = d;
    return wrapper;
}

const char *coffer_readdir(coffer_dir *dir, unsigned char *type) {
    for (;;) {
        errno = 0;
        struct dirent *e = readdir(dir->dir);
        if (!e) return NULL;
        const char *n = e->d_name;
        if (n[0] == '.' && (n[1] == 0 || (n[1] == '.' && n[2] == 0))) continue;
        if (type) *type = e->d_type;
        return n;
    }
}

void coffer_closedir(coffer_dir *dir) {
    if (!dir) return;
    closedir(dir->dir);
    free(dir);
}

void coffer_rewinddir(coffer_dir *dir) {
    if (dir) rewinddir(dir->dir);
}

int coffer_dirfd(coffer_dir *dir) {
    return dir ? dirfd(dir->dir) : -1;
}


int coffer_syncfs(int fd) {
#if defined(__linux__)
    return syncfs(fd);
#else
    (void)fd;
    sync();
    return 0;
#endif
}

int coffer_fallocate(int fd, int mode, int64_t offset, int64_t length) {
#if defined(__linux__)
    return fallocate(fd, mode, offset, length);
#else
    (void)fd; (void)mode; (void)offset; (void)length;
    errno = EOPNOTSUPP;
    return -1;
#endif
}

int coffer_start_writeback(int fd, int64_t offset, int64_t length) {
#if defined(__linux__)
    return sync_file_range(fd, offset, length, SYNC_FILE_RANGE_WRITE);
#else
    (void)fd; (void)offset; (void)length;
    return 0;
#endif
}

int coffer_accept_cloexec(int fd) {
    return accept4(fd, NULL, NULL, SOCK_CLOEXEC);
}

int coffer_confine_child(void) {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return -1;
    return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
}

int coffer_pipe_cloexec(int fds[2]) {
    return pipe2(fds, O_CLOEXEC);
}

int coffer_socketpair_cloexec(int fds[2]) {
    return socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds);
}

ssize_t coffer_send_with_fd(int socket, const void *data, size_t length, int fd) {
    struct iovec vector = { .iov_base = (void *)data, .iov_len = length };
    union { char buffer[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } control;
    memset(&control, 0, sizeof control);
    struct msghdr message = { .msg_iov = &vector, .msg_iovlen = 1,
                              .msg_control = control.buffer, .msg_controllen = sizeof control.buffer };
    struct cmsghdr *header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(header), &fd, sizeof(int));
    ssize_t sent;
    do { sent = sendmsg(socket, &message, MSG_NOSIGNAL); } while (sent < 0 && errno == EINTR);
    return sent;
}

ssize_t coffer_receive_with_fd(int socket, void *data, size_t capacity, int *fd) {
    *fd = -1;
    struct iovec vector = { .iov_base = data, .iov_len = capacity };
    union { char buffer[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } control;
    struct msghdr message = { .msg_iov = &vector, .msg_iovlen = 1,
                              .msg_control = control.buffer, .msg_controllen = sizeof control.buffer };
    ssize_t received;
    do { received = recvmsg(socket, &message, MSG_CMSG_CLOEXEC); } while (received < 0 && errno == EINTR);
    if (received < 0) return -1;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header != NULL; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_RIGHTS) memcpy(fd, CMSG_DATA(header), sizeof(int));
    }
    return received;
}

int coffer_spawn_close_from(posix_spawn_file_actions_t *actions, int from) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
#else
    // Without closefrom: each descriptor open now, from /proc/self/fd, closed in the child.
    DIR *folder = opendir("/proc/self/fd");
    if (!folder) return errno;
    int listing = dirfd(folder);
    struct dirent *entry;
    int status = 0;
    while ((entry = readdir(folder)) != NULL) {
        char *end;
        long fd = strtol(entry->d_name, &end, 10);
        if (*end != 0 || end == entry->d_name || fd < from || fd == listing) continue;
        if ((status = posix_spawn_file_actions_addclose(actions, (int)fd)) != 0) break;
    }
    closedir(folder);
    return status;
#endif
}

int coffer_spawn_change_directory(posix_spawn_file_actions_t *actions, const char *path) {
#if defined(__GLIBC__)
    return posix_spawn_file_actions_addchdir_np(actions, path);
#else
    (void)actions; (void)path;
    return ENOSYS;
#endif
}

int coffer_spawn_new_session_flag(void) {
#if defined(POSIX_SPAWN_SETSID)
    return POSIX_SPAWN_SETSID;
#else
    return 0;
#endif
}

int coffer_pidfd_open(pid_t pid) {
#if defined(SYS_pidfd_open)
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    errno = ENOSYS;
    return -1;
#endif
}

int coffer_child_has_ended(pid_t pid, int *status) {
    siginfo_t info;
    memset(&info, 0, sizeof info);
    int result;
    do {
        result = waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT);
    } while (result < 0 && errno == EINTR);
    if (result < 0) return -1;
    if (info.si_pid != pid) return 0;
    if (status) *status = info.si_code == CLD_EXITED ? info.si_status : 128 + info.si_status;
    return 1;
}

int coffer_tune_malloc(int arenas, int mmap_threshold) {
#if defined(__GLIBC__)
    return mallopt(M_ARENA_MAX, arenas) && (mmap_threshold <= 0 || mallopt(M_MMAP_THRESHOLD, mmap_threshold));
#else
    (void)arenas;
    (void)mmap_threshold;
    return 0;
#endif
}
