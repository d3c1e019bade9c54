// Thin wrappers for Linux syscalls that Swift's Glibc module does not export.
// Each returns what the syscall returns (-1 with errno set on failure); on
// platforms without the call they fail with ENOSYS so callers can fall back.
#ifndef CCOFFER_SYSTEM_H
#define CCOFFER_SYSTEM_H

#include <stdint.h>
#include <sys/types.h>
#include <spawn.h>

/// Flags of `coffer_openat2`'s `resolve` argument (linux/openat2.h).
enum {
    COFFER_RESOLVE_NO_XDEV = 0x01,
    COFFER_RESOLVE_NO_MAGICLINKS = 0x02,
    COFFER_RESOLVE_NO_SYMLINKS = 0x04,
    COFFER_RESOLVE_BENEATH = 0x08,
};

/// Flags of `coffer_renameat2`.
enum {
    COFFER_RENAME_NOREPLACE = 1,
    COFFER_RENAME_EXCHANGE = 2,
};

/// Opens the folder `name` (one path component) in `dirfd` for looking names up in it,
/// never through a link: `O_PATH` where the system has it (no read access needed, cheaper),
/// else a plain read-only open.
int coffer_open_folder_for_lookup(int dirfd, const char *name);

/// openat2(2): open `path` relative to `dirfd` with path-resolution restrictions.
int coffer_openat2(int dirfd, const char *path, uint64_t flags, uint64_t mode, uint64_t resolve);

/// renameat2(2).
int coffer_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags);

/// copy_file_range(2) without offsets (uses and advances both file positions).
ssize_t coffer_copy_file_range(int fd_in, int fd_out, size_t length);

/// What `coffer_statx` reports about one directory entry.
typedef struct {
    uint32_t mode;          // st_mode: type and permission bits
    uint64_t size;
    int64_t mtime_sec;
    uint32_t mtime_nsec;
    int64_t btime_sec;      // creation ("birth") time
    uint32_t btime_nsec;
    int has_btime;          // 0 when the file system does not report it
    uint64_t inode;
    uint64_t device;        // makedev(major, minor) of the containing file system
    uint32_t nlink;
    int64_t ctime_sec;      // status change: any write, chmod, rename, or extended attribute change
    uint32_t ctime_nsec;
    int64_t atime_sec;      // last access, as the file system keeps it (relatime, noatime)
    uint32_t atime_nsec;
} coffer_stat;

/// statx(2) of `name` relative to `dirfd`, never following a final symbolic link.
/// Falls back to fstatat when statx is unavailable (no creation time then).
int coffer_statx(int dirfd, const char *name, coffer_stat *out);

/// fstat of an open descriptor, in the same shape.
int coffer_fstat(int fd, coffer_stat *out);

/// getxattr of `name` relative to `dirfd` without following links: getxattrat(2)
/// where the kernel has it, else through the /proc/self/fd magic link of `dirfd`.
ssize_t coffer_getxattr_at(int dirfd, const char *name, const char *attribute, void *value, size_t size);

/// fsetxattr / fgetxattr / fremovexattr on an open file.
int coffer_fsetxattr(int fd, const char *attribute, const void *value, size_t size, int flags);
ssize_t coffer_fgetxattr(int fd, const char *attribute, void *value, size_t size);
int coffer_fremovexattr(int fd, const char *attribute);
/// flistxattr: the names of an open file's extended attributes, each ending in NUL.
ssize_t coffer_flistxattr(int fd, char *list, size_t size);

/// Set modification time (and access time to now) of an open file.
int coffer_set_mtime(int fd, int64_t sec, uint32_t nsec);

/// Directory reading over a descriptor the caller owns (the stream dups it).
typedef struct coffer_dir coffer_dir;
coffer_dir *coffer_opendir(int dirfd);
/// Next entry name (not "." or ".."), or NULL at the end (errno 0) or on error.
/// `type` receives the d_type hint (DT_UNKNOWN when the file system gives none).
const char *coffer_readdir(coffer_dir *dir, unsigned char *type);
void coffer_closedir(coffer_dir *dir);
/// Back to the first entry.
void coffer_rewinddir(coffer_dir *dir);
/// The folder's descriptor (owned by the stream).
int coffer_dirfd(coffer_dir *dir);

/// sync_file_range(2) with SYNC_FILE_RANGE_WRITE: start writing back a range without waiting.
int coffer_start_writeback(int fd, int64_t offset, int64_t length);

/// fallocate(2): reserve, punch or zero space of an open file (`mode` 0, or FALLOC_FL_…);
/// -1 with errno EOPNOTSUPP where the system has no such call.
int coffer_fallocate(int fd, int mode, int64_t offset, int64_t length);

/// syncfs(2): flush the file system holding `fd`.
int coffer_syncfs(int fd);

/// accept4(2) with SOCK_CLOEXEC: the next connection on a listening socket, its descriptor
/// closed on exec. -1 with errno set on failure.
int coffer_accept_cloexec(int fd);

/// pipe2(2) with O_CLOEXEC: a pipe whose ends no program started meanwhile inherits.
int coffer_pipe_cloexec(int fds[2]);

/// socketpair(2) of stream sockets, both ends closed on exec.
int coffer_socketpair_cloexec(int fds[2]);

/// Sends `length` bytes of `data` on the stream socket `socket` with the descriptor `fd`
/// attached (SCM_RIGHTS). Returns the bytes sent, or -1 with errno.
ssize_t coffer_send_with_fd(int socket, const void *data, size_t length, int fd);

/// Receives up to `capacity` bytes from `socket`, and a descriptor if one came with them
/// (`*fd`, closed on exec; -1 when none). Returns the bytes received (0 at the end), or -1.
ssize_t coffer_receive_with_fd(int socket, void *data, size_t capacity, int *fd);

/// For a child that decodes untrusted files: it is killed when its parent dies
/// (PR_SET_PDEATHSIG) and can gain no privileges (PR_SET_NO_NEW_PRIVS). 0, or -1 with errno.
int coffer_confine_child(void);

/// posix_spawn_file_actions_addclosefrom_np: the child closes every descriptor from `from` up,
/// whatever the parent had open (glibc 2.34). 0, or an errno value.
int coffer_spawn_close_from(posix_spawn_file_actions_t *actions, int from);

/// posix_spawn_file_actions_addchdir_np: the child starts in `path` (glibc 2.29). 0, or an
/// errno value.
int coffer_spawn_change_directory(posix_spawn_file_actions_t *actions, const char *path);

/// POSIX_SPAWN_SETSID (glibc 2.26), which the Glibc module does not export: the child starts
/// a session of its own, away from this process's terminal and its signals.
int coffer_spawn_new_session_flag(void);

/// Whether the child `pid` has ended, without reaping it (waitid with WNOWAIT): 1 if it has
/// (and `*status`, when given, is its exit status, or 128 + the signal that ended it), 0 if it
/// runs, -1 with errno (ECHILD: not a child, or reaped already). While it is not reaped its id,
/// and its process group's, cannot be given to another process.
int coffer_child_has_ended(pid_t pid, int *status);

/// pidfd_open(2): a descriptor (closed on exec) that becomes readable when process `pid` ends,
/// or -1 with errno (ENOSYS before Linux 5.3).
int coffer_pidfd_open(pid_t pid);

/// Tunes glibc's malloc for a long-running server: at most `arenas` arenas for the process's
/// threads (`M_ARENA_MAX`), and blocks of `mmap_threshold` bytes or more mapped on their own and
/// given back when freed (`M_MMAP_THRESHOLD`, which also stops glibc from raising it; left as it
/// is when not above 0). 0 where the C library has no such settings.
int coffer_tune_malloc(int arenas, int mmap_threshold);

#endif
