// A FUSE file system through libfuse 3's low-level interface (libfuse3.so.3), loaded the first
// time a mount is asked for: a process that never mounts never maps libfuse, and Coffer builds
// where libfuse3-dev is missing. Only plain C types cross this boundary; libfuse's own records
// (with their bit fields) stay inside the shim.
//
// How it is used: fill a `coffer_fuse_ops` with the operations implemented (NULL for the others),
// `coffer_fuse_mount`, then `coffer_fuse_run` on a thread of its own until `coffer_fuse_exit`
// (from anywhere, even a signal handler) or an unmount ends it, then
// `coffer_fuse_unmount_and_destroy`. Every operation that receives a request must answer it
// exactly once with one of the `coffer_fuse_reply_…` functions, from any thread, possibly later.
#ifndef CCOFFER_FUSE_H
#define CCOFFER_FUSE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>

/// Whether libfuse 3 could be loaded with everything the shim uses (tried once).
int coffer_fuse_available(void);

/// Why libfuse could not be loaded, or "" when it was.
const char *coffer_fuse_load_error(void);

/// A request from the kernel, valid until it is answered.
typedef struct coffer_fuse_request coffer_fuse_request;

/// A mounted file system.
typedef struct coffer_fuse_session coffer_fuse_session;

/// The data of a write, in memory or still in the kernel (in a pipe the request was spliced
/// into), valid during the `write` operation that receives it.
typedef struct coffer_fuse_data coffer_fuse_data;

/// The inode number of the mount's root.
#define COFFER_FUSE_ROOT_ID 1ULL

/// The handle argument when the kernel names no open file (a `stat` rather than an `fstat`,
/// a `truncate` rather than an `ftruncate`). Handles given in replies must never be this value.
#define COFFER_FUSE_NO_HANDLE 0xFFFFFFFFFFFFFFFFULL

/// Which fields of `attr` a `setattr` changes (libfuse's values, passed through unchanged).
enum {
    COFFER_FUSE_SET_MODE = 1 << 0,
    COFFER_FUSE_SET_UID = 1 << 1,
    COFFER_FUSE_SET_GID = 1 << 2,
    COFFER_FUSE_SET_SIZE = 1 << 3,
    COFFER_FUSE_SET_ATIME = 1 << 4,
    COFFER_FUSE_SET_MTIME = 1 << 5,
    /// Set the access time to now (`st_atim` is not meaningful).
    COFFER_FUSE_SET_ATIME_NOW = 1 << 7,
    /// Set the modification time to now (`st_mtim` is not meaningful).
    COFFER_FUSE_SET_MTIME_NOW = 1 << 8,
    COFFER_FUSE_SET_CTIME = 1 << 10,
};

/// The operations of a file system. Each is called on one of the loop's threads, concurrently
/// with the others, with the `context` given to `coffer_fuse_mount`. Names are single path
/// components; inode numbers are the ones given in replies (`COFFER_FUSE_ROOT_ID` for the root).
/// A NULL member is not implemented: libfuse answers ENOSYS, or success where doing nothing is
/// an answer (`open` and `opendir` with handle 0, `release`, `releasedir`, `statfs` with an
/// empty disk), and the kernel takes ENOSYS from `flush`, `fsync` and `access` as success and
/// stops asking. Without `forget`, inode numbers must stay valid for the whole mount.
///
/// Notes on what the kernel sends: `open` never carries O_TRUNC, a truncation comes as a
/// `setattr` of the size; modes in `mkdir` and `create` have the caller's umask applied already;
/// with `writeback_cache` a file opened write-only may still be read through its handle.
typedef struct coffer_fuse_ops {
    /// Answer with `reply_entry` (the lookup count of the inode goes up by one; `ino` 0 caches
    /// the name's absence for `entry_timeout`) or `reply_err` (ENOENT).
    void (*lookup)(void *context, coffer_fuse_request *request, uint64_t parent, const char *name);
    /// The kernel dropped `nlookup` references to `ino`; at zero the number may be reused.
    /// No request to answer (batched forgets arrive here one by one).
    void (*forget)(void *context, uint64_t ino, uint64_t nlookup);
    /// Answer with `reply_attr`. `fh` is the open file's handle or `COFFER_FUSE_NO_HANDLE`.
    void (*getattr)(void *context, coffer_fuse_request *request, uint64_t ino, uint64_t fh);
    /// Change the fields named in `to_set` (`COFFER_FUSE_SET_…`) to those of `attr`, then
    /// answer with `reply_attr` carrying the new attributes.
    void (*setattr)(void *context, coffer_fuse_request *request, uint64_t ino, const struct stat *attr,
                    int to_set, uint64_t fh);
    /// Answer with `reply_readlink`.
    void (*readlink)(void *context, coffer_fuse_request *request, uint64_t ino);
    /// A symbolic link `name` in `parent` pointing at `target`; answer with `reply_entry`.
    void (*symlink)(void *context, coffer_fuse_request *request, const char *target, uint64_t parent,
                    const char *name);
    /// Answer with `reply_entry` for the new folder.
    void (*mkdir)(void *context, coffer_fuse_request *request, uint64_t parent, const char *name, mode_t mode);
    /// Answer with `reply_err(request, 0)` on success. The inode lives on until forgotten.
    void (*unlink)(void *context, coffer_fuse_request *request, uint64_t parent, const char *name);
    void (*rmdir)(void *context, coffer_fuse_request *request, uint64_t parent, const char *name);
    /// `flags` is 0, RENAME_NOREPLACE or RENAME_EXCHANGE (EINVAL for what is not supported).
    void (*rename)(void *context, coffer_fuse_request *request, uint64_t parent, const char *name,
                   uint64_t new_parent, const char *new_name, unsigned int flags);
    /// `flags` are open(2)'s. Answer with `reply_open`.
    void (*open)(void *context, coffer_fuse_request *request, uint64_t ino, int flags);
    /// Answer with `reply_buf`: `size` bytes unless the file ends first (unless `direct_io`).
    void (*read)(void *context, coffer_fuse_request *request, uint64_t ino, size_t size, int64_t offset,
                 uint64_t fh);
    /// Answer with `reply_write`. `data` (`size` bytes, written out with
    /// `coffer_fuse_write_data`) is only valid during the call.
    void (*write)(void *context, coffer_fuse_request *request, uint64_t ino, coffer_fuse_data *data, size_t size,
                  int64_t offset, uint64_t fh);
    /// A descriptor of the open file was closed (once per close(2), so maybe several times).
    void (*flush)(void *context, coffer_fuse_request *request, uint64_t ino, uint64_t fh);
    /// The last reference to the open file went away; the answer (`reply_err`) is not awaited.
    void (*release)(void *context, coffer_fuse_request *request, uint64_t ino, int flags, uint64_t fh);
    void (*fsync)(void *context, coffer_fuse_request *request, uint64_t ino, int datasync, uint64_t fh);
    /// Answer with `reply_open` (its `direct_io` and `keep_cache` are ignored for folders).
    void (*opendir)(void *context, coffer_fuse_request *request, uint64_t ino, int flags);
    /// Answer with `reply_buf` of entries made by `coffer_fuse_add_direntry`, starting after the
    /// entry whose `next_offset` was `offset` (0: from the start); an empty buffer ends the listing.
    void (*readdir)(void *context, coffer_fuse_request *request, uint64_t ino, size_t size, int64_t offset,
                    uint64_t fh);
    /// As `readdir`, with entries made by `coffer_fuse_add_direntry_plus`. Having it makes the
    /// kernel ask for attributes with the names (it still uses `readdir` when that is cheaper).
    void (*readdirplus)(void *context, coffer_fuse_request *request, uint64_t ino, size_t size,
                        int64_t offset, uint64_t fh);
    void (*releasedir)(void *context, coffer_fuse_request *request, uint64_t ino, uint64_t fh);
    /// Answer with `reply_statfs`.
    void (*statfs)(void *context, coffer_fuse_request *request, uint64_t ino);
    /// `flags` are XATTR_CREATE or XATTR_REPLACE. Answer with `reply_err` (0, or ENOTSUP).
    void (*setxattr)(void *context, coffer_fuse_request *request, uint64_t ino, const char *name,
                     const char *value, size_t size, int flags);
    /// `size` 0 asks for the value's length (`reply_xattr`); otherwise answer with `reply_buf`,
    /// or ERANGE when the value is longer than `size`; ENODATA when there is no such attribute.
    void (*getxattr)(void *context, coffer_fuse_request *request, uint64_t ino, const char *name, size_t size);
    /// The names, each ending with a NUL, answered as `getxattr` is.
    void (*listxattr)(void *context, coffer_fuse_request *request, uint64_t ino, size_t size);
    void (*removexattr)(void *context, coffer_fuse_request *request, uint64_t ino, const char *name);
    /// access(2)'s `mask` (R_OK, W_OK, X_OK, or F_OK). Not asked with `default_permissions`.
    void (*access)(void *context, coffer_fuse_request *request, uint64_t ino, int mask);
    /// Create and open a file; answer with `reply_create`.
    void (*create)(void *context, coffer_fuse_request *request, uint64_t parent, const char *name,
                   mode_t mode, int flags);
    /// fallocate(2)'s `mode` (0 to reserve space, FALLOC_FL_PUNCH_HOLE…); answer with `reply_err`.
    void (*fallocate)(void *context, coffer_fuse_request *request, uint64_t ino, int mode, int64_t offset,
                      int64_t length, uint64_t fh);
    /// SEEK_DATA or SEEK_HOLE (the kernel does SEEK_SET, SEEK_CUR and SEEK_END itself); answer
    /// with `reply_lseek`.
    void (*lseek)(void *context, coffer_fuse_request *request, uint64_t ino, int64_t offset, int whence,
                  uint64_t fh);
} coffer_fuse_ops;

/// How the kernel should treat the file system, fixed at mount. Zeroed is the default.
typedef struct coffer_fuse_settings {
    /// Nonzero lets the kernel keep written data in its page cache and send it later, in large
    /// writes (faster, but the file system learns of writes late and must accept reads through
    /// write-only handles). Off by default: every write(2) reaches `write` before it returns.
    int writeback_cache;
} coffer_fuse_settings;

/// Mounts a file system on `mountpoint`, an existing folder (the kernel would also mount over a
/// file: the caller checks). `options` is NULL or a NULL-terminated list of mount options, each
/// given to libfuse as `-o option`: `fsname=coffer`, `subtype=coffer`, `default_permissions` (the
/// kernel checks modes itself), `allow_other` (others may enter; needs root or `user_allow_other`
/// in /etc/fuse.conf), `ro`, `noatime`. `settings` may be NULL. `context` is passed to every
/// operation. Mounting needs root or the setuid fusermount3. libfuse's signal handlers are not
/// installed: ending the loop is the caller's business.
/// Returns NULL with a message in `error` when libfuse is missing, an option is unknown or the
/// mount is refused.
coffer_fuse_session *coffer_fuse_mount(const char *mountpoint, const char *const *options,
                                       const coffer_fuse_ops *ops, const coffer_fuse_settings *settings,
                                       void *context, char *error, size_t capacity);

/// Serves requests on `threads` threads (1–64: the calling one and `threads - 1` started for the
/// purpose, with all signals blocked) until `coffer_fuse_exit` is called or the file system is
/// unmounted from outside (umount, fusermount3 -u). Call it once per session. Returns when every
/// thread has finished the request it was handling: 0, or a negative errno when reading from the
/// kernel failed. Requests still queued then are answered with an error when the session is
/// destroyed.
int coffer_fuse_run(coffer_fuse_session *session, int threads);

/// Makes `coffer_fuse_run` return soon, from any thread, including an operation or a signal
/// handler (it only sets a flag and writes to an eventfd). The mount stays until
/// `coffer_fuse_unmount_and_destroy`.
void coffer_fuse_exit(coffer_fuse_session *session);

/// Unmounts (lazily: programs still inside the mount get errors rather than block the unmount)
/// and frees the session. Call it after `coffer_fuse_run` has returned (or was never called).
void coffer_fuse_unmount_and_destroy(coffer_fuse_session *session);

// Telling the kernel its caches are out of date, for changes that did not come through the
// mount. Each returns 0 or a negative errno (-ENOENT when the kernel has nothing cached). Call
// them between mount and destroy, but never from inside an operation on the same inode or
// folder: the kernel may be holding a lock that operation's request waits on, and both hang.

/// Drops the cached attributes of `ino` and its cached data from `offset` for `length` bytes
/// (0: to the end; a negative `offset`: attributes only).
int coffer_fuse_notify_inval_inode(coffer_fuse_session *session, uint64_t ino, int64_t offset, int64_t length);

/// Forgets the name `name` in folder `parent` (the next use looks it up again).
int coffer_fuse_notify_inval_entry(coffer_fuse_session *session, uint64_t parent, const char *name);

/// Tells the kernel `name` in `parent`, which was `child`, has been deleted.
int coffer_fuse_notify_delete(coffer_fuse_session *session, uint64_t parent, uint64_t child, const char *name);

// Answers. Each returns 0, or a negative errno when the answer could not be delivered (-ENOENT:
// the request was interrupted and the kernel no longer waits for it).

/// Answers with an error (a positive errno), or success without data when `error` is 0.
int coffer_fuse_reply_err(coffer_fuse_request *request, int error);

/// Answers without answering (only for requests that expect none).
void coffer_fuse_reply_none(coffer_fuse_request *request);

/// Answers a lookup, mkdir, symlink: the inode `ino` (0: the name does not exist) with
/// `attr`, which may be NULL only then. Timeouts are how long, in seconds, the kernel may trust
/// the attributes and the name without asking again.
int coffer_fuse_reply_entry(coffer_fuse_request *request, uint64_t ino, uint64_t generation,
                            const struct stat *attr, double attr_timeout, double entry_timeout);

/// Answers a create: the new inode, as `reply_entry`, opened with the handle `fh`, as
/// `reply_open`. When it fails the kernel never learned the handle: release it here.
int coffer_fuse_reply_create(coffer_fuse_request *request, uint64_t ino, uint64_t generation,
                             const struct stat *attr, double attr_timeout, double entry_timeout,
                             uint64_t fh, int direct_io, int keep_cache);

/// Answers a getattr or setattr.
int coffer_fuse_reply_attr(coffer_fuse_request *request, const struct stat *attr, double timeout);

/// Answers a readlink with the link's target.
int coffer_fuse_reply_readlink(coffer_fuse_request *request, const char *target);

/// Answers an open or opendir with the handle later operations receive as `fh`. `direct_io`
/// bypasses the page cache (reads return what `read` gives, sizes need not be known);
/// `keep_cache` keeps cached data from an earlier open. When it fails the kernel never learned
/// the handle: release it here.
int coffer_fuse_reply_open(coffer_fuse_request *request, uint64_t fh, int direct_io, int keep_cache);

/// Writes a write's data to `fd` at `offset` (`pwrite`, or `splice` from the pipe it waits in,
/// which leaves it in no buffer of the process): the number of bytes written, or -errno when
/// none could be (-EIO when the file took nothing). Call it once per `write`: what it took from
/// the pipe is gone, and what is left unwritten is dropped when the operation returns.
ssize_t coffer_fuse_write_data(coffer_fuse_data *data, int fd, int64_t offset);

/// Answers a write with the number of bytes written.
int coffer_fuse_reply_write(coffer_fuse_request *request, size_t count);

/// Answers with bytes (copied before it returns): read, readdir, getxattr, listxattr.
int coffer_fuse_reply_buf(coffer_fuse_request *request, const char *data, size_t size);

/// Answers a statfs.
int coffer_fuse_reply_statfs(coffer_fuse_request *request, const struct statvfs *stats);

/// Answers a getxattr or listxattr asked with size 0 with the size needed.
int coffer_fuse_reply_xattr(coffer_fuse_request *request, size_t size);

/// Answers an lseek with the offset found.
int coffer_fuse_reply_lseek(coffer_fuse_request *request, int64_t offset);

/// Writes a folder entry for `readdir` into `buffer` (`remaining` bytes free). Only `st_ino` and
/// the type bits of `st_mode` are used. `next_offset` is what the next `readdir` gets as
/// `offset` to continue after this entry (any value the file system understands, not 0).
/// Returns the entry's size; when that is more than `remaining` nothing was written, and the
/// listing should stop there (the kernel asks again from the last entry that fit).
size_t coffer_fuse_add_direntry(coffer_fuse_request *request, char *buffer, size_t remaining,
                                const char *name, const struct stat *attr, int64_t next_offset);

/// Writes a folder entry for `readdirplus`: as `coffer_fuse_add_direntry`, with what
/// `reply_entry` would say about it. Every entry written, except "." and "..", counts as a lookup
/// of `ino` (to be balanced by `forget`).
size_t coffer_fuse_add_direntry_plus(coffer_fuse_request *request, char *buffer, size_t remaining,
                                     const char *name, uint64_t ino, uint64_t generation,
                                     const struct stat *attr, double attr_timeout, double entry_timeout,
                                     int64_t next_offset);

/// Who made the request (any pointer may be NULL). For a write the kernel sends later from its
/// cache (`writeback_cache`) these are not the writer's.
void coffer_fuse_request_ids(coffer_fuse_request *request, uid_t *uid, gid_t *gid, pid_t *pid);

/// Whether the program that made the request has given up on it (a signal interrupted it):
/// a long operation may then stop and answer EINTR.
int coffer_fuse_interrupted(coffer_fuse_request *request);

#endif
