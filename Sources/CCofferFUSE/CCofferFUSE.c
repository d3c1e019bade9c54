#include "CCofferFUSE.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

// libfuse's headers are not needed to build: the records and functions the shim uses are
// declared below with the layout they have in libfuse 3.14 (Debian 12's libfuse3.so.3). All of
// them are part of the 3.x ABI, which has only grown at the ends of its records since 3.0.

typedef struct fuse_req *request_t;  // libfuse's request; handed to Swift as coffer_fuse_request
struct fuse_session;                  // libfuse's session, never looked into

// An open file as libfuse describes it (40 bytes): the open(2) flags, a word of one-bit
// switches (in declaration order: writepage, direct_io, keep_cache, flush, nonseekable,
// flock_release, cache_readdir, noflush, then unused bits), a spare word, the handle, the lock
// owner and poll events.
typedef struct {
    int flags;
    unsigned int writepage : 1, direct_io : 1, keep_cache : 1, flush : 1;
    unsigned int nonseekable : 1, flock_release : 1, cache_readdir : 1, noflush : 1;
    unsigned int : 24;
    unsigned int : 32;
    uint64_t fh;
    uint64_t lock_owner;
    uint32_t poll_events;
} file_info;

// What the kernel offers and what the file system asks for, seen by the init callback.
typedef struct {
    unsigned int proto_major, proto_minor;
    unsigned int max_write, max_read, max_readahead;
    unsigned int capable, want;
    unsigned int max_background, congestion_threshold, time_gran;
    unsigned int reserved[22];
} connection_info;

// Capability bits of connection_info's `capable` and `want`.
enum {
    CAP_ASYNC_READ = 1 << 0,
    CAP_ATOMIC_O_TRUNC = 1 << 3,
    CAP_EXPORT_SUPPORT = 1 << 4,
    CAP_SPLICE_WRITE = 1 << 7,
    CAP_SPLICE_MOVE = 1 << 8,
    CAP_SPLICE_READ = 1 << 9,
    CAP_AUTO_INVAL_DATA = 1 << 12,
    CAP_READDIRPLUS = 1 << 13,
    CAP_READDIRPLUS_AUTO = 1 << 14,
    CAP_WRITEBACK_CACHE = 1 << 16,
    CAP_HANDLE_KILLPRIV = 1 << 20,
};

// An inode as a lookup answers it.
typedef struct {
    uint64_t ino;
    uint64_t generation;
    struct stat attr;
    double attr_timeout;
    double entry_timeout;
} entry_param;

typedef struct { uid_t uid; gid_t gid; pid_t pid; mode_t umask; } request_context;
typedef struct { uint64_t ino; uint64_t nlookup; } forget_item;
typedef struct { int argc; char **argv; int allocated; } argument_list;

// A buffer a request is read into (the `flags` word is an enum in libfuse).
typedef struct {
    size_t size;
    int flags;
    void *mem;
    int fd;
    off_t pos;
    size_t spare[8];   // room for fields later libfuse releases add at the end (zeroed)
} request_buffer;

// One piece of a write's data as libfuse hands it over: bytes in memory, or waiting in a pipe
// (`is_fd`, read from the device with splice). A `seek` descriptor is written at `pos`.
typedef struct {
    size_t size;
    int flags;
    void *mem;
    int fd;
    off_t pos;
} data_piece;

enum { BUF_IS_FD = 1 << 1, BUF_FD_SEEK = 1 << 2, BUF_FD_RETRY = 1 << 3 };

// The pieces of one write (libfuse's fuse_bufvec): `idx` and `off` say how far it was taken.
typedef struct {
    size_t count;
    size_t idx;
    size_t off;
    data_piece piece[1];
} data_pieces;

struct coffer_fuse_data { data_pieces pieces; };

// The low-level operations table, in libfuse's order. Slots the shim never fills are typed
// `unused`; libfuse only compares them with NULL.
typedef void (*unused)(void);
typedef struct {
    void (*init)(void *userdata, connection_info *conn);
    unused destroy;
    void (*lookup)(request_t, uint64_t parent, const char *name);
    void (*forget)(request_t, uint64_t ino, uint64_t nlookup);
    void (*getattr)(request_t, uint64_t ino, file_info *fi);
    void (*setattr)(request_t, uint64_t ino, struct stat *attr, int to_set, file_info *fi);
    void (*readlink)(request_t, uint64_t ino);
    unused mknod;
    void (*mkdir)(request_t, uint64_t parent, const char *name, mode_t mode);
    void (*unlink)(request_t, uint64_t parent, const char *name);
    void (*rmdir)(request_t, uint64_t parent, const char *name);
    void (*symlink)(request_t, const char *target, uint64_t parent, const char *name);
    void (*rename)(request_t, uint64_t parent, const char *name, uint64_t new_parent, const char *new_name,
                   unsigned int flags);
    unused link;
    void (*open)(request_t, uint64_t ino, file_info *fi);
    void (*read)(request_t, uint64_t ino, size_t size, off_t offset, file_info *fi);
    unused write;  // write_buf instead: it receives a write's data where it lies
    void (*flush)(request_t, uint64_t ino, file_info *fi);
    void (*release)(request_t, uint64_t ino, file_info *fi);
    void (*fsync)(request_t, uint64_t ino, int datasync, file_info *fi);
    void (*opendir)(request_t, uint64_t ino, file_info *fi);
    void (*readdir)(request_t, uint64_t ino, size_t size, off_t offset, file_info *fi);
    void (*releasedir)(request_t, uint64_t ino, file_info *fi);
    unused fsyncdir;
    void (*statfs)(request_t, uint64_t ino);
    void (*setxattr)(request_t, uint64_t ino, const char *name, const char *value, size_t size, int flags);
    void (*getxattr)(request_t, uint64_t ino, const char *name, size_t size);
    void (*listxattr)(request_t, uint64_t ino, size_t size);
    void (*removexattr)(request_t, uint64_t ino, const char *name);
    void (*access)(request_t, uint64_t ino, int mask);
    void (*create)(request_t, uint64_t parent, const char *name, mode_t mode, file_info *fi);
    unused getlk, setlk, bmap, ioctl, poll;
    void (*write_buf)(request_t, uint64_t ino, data_pieces *data, off_t offset, file_info *fi);
    unused retrieve_reply;
    void (*forget_multi)(request_t, size_t count, forget_item *items);
    unused flock;
    void (*fallocate)(request_t, uint64_t ino, int mode, off_t offset, off_t length, file_info *fi);
    void (*readdirplus)(request_t, uint64_t ino, size_t size, off_t offset, file_info *fi);
    unused copy_file_range;
    void (*lseek)(request_t, uint64_t ino, off_t offset, int whence, file_info *fi);
} lowlevel_ops;

typedef void (*log_handler)(int level, const char *format, va_list arguments);

static struct {
    int loaded;
    struct fuse_session *(*session_new)(argument_list *args, const lowlevel_ops *ops, size_t ops_size,
                                        void *userdata);
    int (*session_mount)(struct fuse_session *session, const char *mountpoint);
    int (*session_fd)(struct fuse_session *session);
    void (*session_exit)(struct fuse_session *session);
    void (*session_unmount)(struct fuse_session *session);
    void (*session_destroy)(struct fuse_session *session);
    int (*session_receive_buf)(struct fuse_session *session, request_buffer *buffer);
    void (*session_process_buf)(struct fuse_session *session, const request_buffer *buffer);
    void (*free_args)(argument_list *args);
    void *(*req_userdata)(request_t request);
    const request_context *(*req_ctx)(request_t request);
    int (*req_interrupted)(request_t request);
    int (*reply_err)(request_t request, int error);
    void (*reply_none)(request_t request);
    int (*reply_entry)(request_t request, const entry_param *entry);
    int (*reply_create)(request_t request, const entry_param *entry, const file_info *fi);
    int (*reply_attr)(request_t request, const struct stat *attr, double timeout);
    int (*reply_readlink)(request_t request, const char *target);
    int (*reply_open)(request_t request, const file_info *fi);
    int (*reply_write)(request_t request, size_t count);
    int (*reply_buf)(request_t request, const char *data, size_t size);
    int (*reply_statfs)(request_t request, const struct statvfs *stats);
    int (*reply_xattr)(request_t request, size_t size);
    int (*reply_lseek)(request_t request, off_t offset);
    size_t (*add_direntry)(request_t request, char *buffer, size_t size, const char *name,
                           const struct stat *attr, off_t next);
    size_t (*add_direntry_plus)(request_t request, char *buffer, size_t size, const char *name,
                                const entry_param *entry, off_t next);
    int (*notify_inval_inode)(struct fuse_session *session, uint64_t ino, off_t offset, off_t length);
    int (*notify_inval_entry)(struct fuse_session *session, uint64_t parent, const char *name, size_t length);
    int (*notify_delete)(struct fuse_session *session, uint64_t parent, uint64_t child, const char *name,
                         size_t length);
    size_t (*buf_size)(const data_pieces *data);
    ssize_t (*buf_copy)(data_pieces *destination, data_pieces *source, int flags);
    void (*set_log_func)(log_handler handler);  // since 3.7; optional
} fuse;

static pthread_once_t fuse_once = PTHREAD_ONCE_INIT;
static char load_error[256];

// libfuse reports problems through a log function (stderr by default). While a thread mounts,
// what it says goes into that mount's error text instead; the rest still goes to stderr.
static _Thread_local char *captured;
static _Thread_local size_t captured_capacity;

static void log_message(int level, const char *format, va_list arguments) {
    (void)level;
    if (captured == NULL) {
        vfprintf(stderr, format, arguments);
        return;
    }
    size_t used = strlen(captured);
    if (used + 1 < captured_capacity) vsnprintf(captured + used, captured_capacity - used, format, arguments);
}

static void load(void) {
    void *library = dlopen("libfuse3.so.3", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *reason = dlerror();
        snprintf(load_error, sizeof load_error, "%s", reason != NULL ? reason : "libfuse3.so.3 could not be loaded");
        return;
    }
    const char *missing = NULL;
#define FIND(field, name)                                                   \
    fuse.field = (__typeof__(fuse.field))dlsym(library, name);              \
    if (fuse.field == NULL && missing == NULL) missing = name
    FIND(session_new, "fuse_session_new");
    FIND(session_mount, "fuse_session_mount");
    FIND(session_fd, "fuse_session_fd");
    FIND(session_exit, "fuse_session_exit");
    FIND(session_unmount, "fuse_session_unmount");
    FIND(session_destroy, "fuse_session_destroy");
    FIND(session_receive_buf, "fuse_session_receive_buf");
    FIND(session_process_buf, "fuse_session_process_buf");
    FIND(free_args, "fuse_opt_free_args");
    FIND(req_userdata, "fuse_req_userdata");
    FIND(req_ctx, "fuse_req_ctx");
    FIND(req_interrupted, "fuse_req_interrupted");
    FIND(reply_err, "fuse_reply_err");
    FIND(reply_none, "fuse_reply_none");
    FIND(reply_entry, "fuse_reply_entry");
    FIND(reply_create, "fuse_reply_create");
    FIND(reply_attr, "fuse_reply_attr");
    FIND(reply_readlink, "fuse_reply_readlink");
    FIND(reply_open, "fuse_reply_open");
    FIND(reply_write, "fuse_reply_write");
    FIND(reply_buf, "fuse_reply_buf");
    FIND(reply_statfs, "fuse_reply_statfs");
    FIND(reply_xattr, "fuse_reply_xattr");
    FIND(reply_lseek, "fuse_reply_lseek");
    FIND(add_direntry, "fuse_add_direntry");
    FIND(add_direntry_plus, "fuse_add_direntry_plus");
    FIND(notify_inval_inode, "fuse_lowlevel_notify_inval_inode");
    FIND(notify_inval_entry, "fuse_lowlevel_notify_inval_entry");
    FIND(notify_delete, "fuse_lowlevel_notify_delete");
    FIND(buf_size, "fuse_buf_size");
    FIND(buf_copy, "fuse_buf_copy");
#undef FIND
    if (missing != NULL) {
        snprintf(load_error, sizeof load_error, "libfuse3.so.3 has no %s", missing);
        return;
    }
    fuse.set_log_func = (__typeof__(fuse.set_log_func))dlsym(library, "fuse_set_log_func");
    if (fuse.set_log_func != NULL) fuse.set_log_func(log_message);
    fuse.loaded = 1;
}

int coffer_fuse_available(void) {
    pthread_once(&fuse_once, load);
    return fuse.loaded;
}

const char *coffer_fuse_load_error(void) {
    pthread_once(&fuse_once, load);
    return load_error;
}

struct coffer_fuse_session {
    struct fuse_session *session;
    coffer_fuse_ops ops;
    coffer_fuse_settings settings;
    void *context;
    int device;          // /dev/fuse, owned by libfuse
    int wake;            // an eventfd, readable once the loop should stop
    atomic_int stopping;
    atomic_int error;    // the first failure reading the device, as a negative errno
};

// From libfuse's callbacks to Swift's: the session comes back as the request's user data.

#define SESSION(request) ((coffer_fuse_session *)fuse.req_userdata(request))
#define FORWARD(op, request, ...)                                                        \
    do {                                                                                 \
        coffer_fuse_session *session_ = SESSION(request);                                \
        session_->ops.op(session_->context, (coffer_fuse_request *)(request), __VA_ARGS__); \
    } while (0)

static uint64_t handle_of(const file_info *fi) { return fi != NULL ? fi->fh : COFFER_FUSE_NO_HANDLE; }

static void on_init(void *userdata, connection_info *conn) {
    coffer_fuse_session *session = userdata;
    unsigned int want = conn->want;  // libfuse's defaults, adjusted:
    // Truncations as setattr, never as an O_TRUNC to handle in open; the kernel clears setuid
    // bits itself; no NFS export (it would look up "." and ".." by inode number); the write-back
    // cache only when asked. Whether a file's cached pages stay valid is decided at each open
    // (its keep_cache), not whenever its time is seen to change: the mount's own writes change
    // the time too, and the pages they left are right.
    //
    // Requests are read from the device with splice (libfuse's default once write_buf is
    // given): a write's data then stays in the kernel's pages, held by a pipe, and is spliced
    // from there into the file, one copy fewer than reading it into memory and writing it out.
    // libfuse reads requests that carry no big payload out of the pipe at once; where the pipe
    // cannot be made big enough for a whole write (an unprivileged process, 1 MiB at most by
    // default), it reads the device as before. Replies are plain buffers (no SPLICE_WRITE).
    want &= ~(unsigned int)(CAP_ATOMIC_O_TRUNC | CAP_HANDLE_KILLPRIV | CAP_SPLICE_WRITE
                            | CAP_SPLICE_MOVE | CAP_EXPORT_SUPPORT | CAP_WRITEBACK_CACHE
                            | CAP_READDIRPLUS | CAP_READDIRPLUS_AUTO | CAP_AUTO_INVAL_DATA);
    want |= CAP_ASYNC_READ;
    if (session->settings.writeback_cache) want |= CAP_WRITEBACK_CACHE;
    // With readdirplus the kernel fills its caches while listing; with readdir as well it
    // chooses, per listing, whether the attributes are worth it.
    if (session->ops.readdirplus != NULL) {
        want |= CAP_READDIRPLUS;
        if (session->ops.readdir != NULL) want |= CAP_READDIRPLUS_AUTO;
    }
    conn->want = want & conn->capable;  // asking for more than offered would fail the mount
    // Writes of up to 512 KiB (libfuse has already lowered this to 128 KiB for kernels before
    // 4.20): with a page for its header, a write request then fits in a pipe of 1 MiB, the most
    // a process without CAP_SYS_RESOURCE may have by default, so its data can be spliced. (At
    // 1 MiB the pipe could not hold one, every request was read into memory, and writing cost
    // 2.5 times the CPU: Benchmarks/README.md.)
    if (conn->max_write > 512u << 10) conn->max_write = 512u << 10;
}

static void on_lookup(request_t r, uint64_t parent, const char *name) { FORWARD(lookup, r, parent, name); }

static void on_forget(request_t r, uint64_t ino, uint64_t nlookup) {
    coffer_fuse_session *session = SESSION(r);
    session->ops.forget(session->context, ino, nlookup);
    fuse.reply_none(r);
}

static void on_forget_multi(request_t r, size_t count, forget_item *items) {
    coffer_fuse_session *session = SESSION(r);
    for (size_t i = 0; i < count; i++) session->ops.forget(session->context, items[i].ino, items[i].nlookup);
    fuse.reply_none(r);
}

static void on_getattr(request_t r, uint64_t ino, file_info *fi) { FORWARD(getattr, r, ino, handle_of(fi)); }
static void on_setattr(request_t r, uint64_t ino, struct stat *attr, int to_set, file_info *fi) {
    FORWARD(setattr, r, ino, attr, to_set, handle_of(fi));
}
static void on_readlink(request_t r, uint64_t ino) { FORWARD(readlink, r, ino); }
static void on_symlink(request_t r, const char *target, uint64_t parent, const char *name) {
    FORWARD(symlink, r, target, parent, name);
}
static void on_mkdir(request_t r, uint64_t parent, const char *name, mode_t mode) {
    FORWARD(mkdir, r, parent, name, mode);
}
static void on_unlink(request_t r, uint64_t parent, const char *name) { FORWARD(unlink, r, parent, name); }
static void on_rmdir(request_t r, uint64_t parent, const char *name) { FORWARD(rmdir, r, parent, name); }
static void on_rename(request_t r, uint64_t parent, const char *name, uint64_t new_parent, const char *new_name,
                      unsigned int flags) {
    FORWARD(rename, r, parent, name, new_parent, new_name, flags);
}
static void on_open(request_t r, uint64_t ino, file_info *fi) { FORWARD(open, r, ino, fi->flags); }
static void on_read(request_t r, uint64_t ino, size_t size, off_t offset, file_info *fi) {
    FORWARD(read, r, ino, size, (int64_t)offset, fi->fh);
}
static void on_write_buf(request_t r, uint64_t ino, data_pieces *data, off_t offset, file_info *fi) {
    FORWARD(write, r, ino, (coffer_fuse_data *)data, fuse.buf_size(data), (int64_t)offset, fi->fh);
}

ssize_t coffer_fuse_write_data(coffer_fuse_data *data, int fd, int64_t offset) {
    size_t size = fuse.buf_size(&data->pieces);
    data_pieces destination = {
        .count = 1,
        .piece = {{.size = size, .flags = BUF_IS_FD | BUF_FD_SEEK | BUF_FD_RETRY, .fd = fd, .pos = (off_t)offset}},
    };
    // Splices from the pipe where the data waits in one; writes from memory otherwise. With
    // FD_RETRY libfuse goes on after a short splice or write until all is written or a call
    // fails: then it gives the count so far, or the failure when nothing was written.
    ssize_t written = fuse.buf_copy(&destination, &data->pieces, 0);
    return written == 0 && size > 0 ? -EIO : written;
}
static void on_flush(request_t r, uint64_t ino, file_info *fi) { FORWARD(flush, r, ino, fi->fh); }
static void on_release(request_t r, uint64_t ino, file_info *fi) { FORWARD(release, r, ino, fi->flags, fi->fh); }
static void on_fsync(request_t r, uint64_t ino, int datasync, file_info *fi) {
    FORWARD(fsync, r, ino, datasync, fi->fh);
}
static void on_opendir(request_t r, uint64_t ino, file_info *fi) { FORWARD(opendir, r, ino, fi->flags); }
static void on_readdir(request_t r, uint64_t ino, size_t size, off_t offset, file_info *fi) {
    FORWARD(readdir, r, ino, size, (int64_t)offset, fi->fh);
}
static void on_readdirplus(request_t r, uint64_t ino, size_t size, off_t offset, file_info *fi) {
    FORWARD(readdirplus, r, ino, size, (int64_t)offset, fi->fh);
}
static void on_releasedir(request_t r, uint64_t ino, file_info *fi) { FORWARD(releasedir, r, ino, fi->fh); }
static void on_statfs(request_t r, uint64_t ino) { FORWARD(statfs, r, ino); }
static void on_setxattr(request_t r, uint64_t ino, const char *name, const char *value, size_t size, int flags) {
    FORWARD(setxattr, r, ino, name, value, size, flags);
}
static void on_getxattr(request_t r, uint64_t ino, const char *name, size_t size) {
    FORWARD(getxattr, r, ino, name, size);
}
static void on_listxattr(request_t r, uint64_t ino, size_t size) { FORWARD(listxattr, r, ino, size); }
static void on_removexattr(request_t r, uint64_t ino, const char *name) { FORWARD(removexattr, r, ino, name); }
static void on_access(request_t r, uint64_t ino, int mask) { FORWARD(access, r, ino, mask); }
static void on_create(request_t r, uint64_t parent, const char *name, mode_t mode, file_info *fi) {
    FORWARD(create, r, parent, name, mode, fi->flags);
}
static void on_fallocate(request_t r, uint64_t ino, int mode, off_t offset, off_t length, file_info *fi) {
    FORWARD(fallocate, r, ino, mode, (int64_t)offset, (int64_t)length, fi->fh);
}
static void on_lseek(request_t r, uint64_t ino, off_t offset, int whence, file_info *fi) {
    FORWARD(lseek, r, ino, (int64_t)offset, whence, fi->fh);
}

// libfuse's table, with an entry for each operation the caller gave.
static lowlevel_ops table_for(const coffer_fuse_ops *ops) {
    lowlevel_ops table;
    memset(&table, 0, sizeof table);
    table.init = on_init;
#define WIRE(op) if (ops->op != NULL) table.op = on_##op
    WIRE(lookup); WIRE(forget); WIRE(getattr); WIRE(setattr); WIRE(readlink); WIRE(symlink);
    WIRE(mkdir); WIRE(unlink); WIRE(rmdir); WIRE(rename); WIRE(open); WIRE(read);
    WIRE(flush); WIRE(release); WIRE(fsync); WIRE(opendir); WIRE(readdir); WIRE(readdirplus);
    WIRE(releasedir); WIRE(statfs); WIRE(setxattr); WIRE(getxattr); WIRE(listxattr);
    WIRE(removexattr); WIRE(access); WIRE(create); WIRE(fallocate); WIRE(lseek);
#undef WIRE
    if (ops->forget != NULL) table.forget_multi = on_forget_multi;
    if (ops->write != NULL) table.write_buf = on_write_buf;
    return table;
}

static void trim(char *text) {
    size_t length = strlen(text);
    while (length > 0 && (text[length - 1] == '\n' || text[length - 1] == ' ')) text[--length] = '\0';
}

coffer_fuse_session *coffer_fuse_mount(const char *mountpoint, const char *const *options,
                                       const coffer_fuse_ops *ops, const coffer_fuse_settings *settings,
                                       void *context, char *error, size_t capacity) {
    error[0] = '\0';
    if (!coffer_fuse_available()) {
        snprintf(error, capacity, "libfuse 3 is not available: %s", load_error);
        return NULL;
    }
    coffer_fuse_session *session = calloc(1, sizeof *session);
    size_t count = 0;
    while (options != NULL && options[count] != NULL) count++;
    // "coffer", then "-o" before each option, then the NULL libfuse's parser expects.
    char **argv = calloc(2 + 2 * count, sizeof *argv);
    if (session == NULL || argv == NULL) {
        free(session);
        free(argv);
        snprintf(error, capacity, "out of memory");
        return NULL;
    }
    session->ops = *ops;
    if (settings != NULL) session->settings = *settings;
    session->context = context;
    session->wake = -1;
    argv[0] = "coffer";
    for (size_t i = 0; i < count; i++) {
        argv[1 + 2 * i] = "-o";
        argv[2 + 2 * i] = (char *)options[i];
    }
    argument_list args = {(int)(1 + 2 * count), argv, 0};
    lowlevel_ops table = table_for(ops);

    captured = error;
    captured_capacity = capacity;
    // libfuse replaces `args` with a copy of its own, holding what it did not understand.
    session->session = fuse.session_new(&args, &table, sizeof table, session);
    fuse.free_args(&args);
    free(argv);
    int mounted = session->session != NULL && fuse.session_mount(session->session, mountpoint) == 0;
    captured = NULL;
    trim(error);
    if (!mounted) {
        if (error[0] == '\0') snprintf(error, capacity, "%s could not be mounted", mountpoint);
        if (session->session != NULL) fuse.session_destroy(session->session);
        free(session);
        return NULL;
    }

    // The loop's threads wait in poll for the device or the eventfd; the device is made
    // non-blocking so that a thread that lost the race for a request goes back to poll rather
    // than sleeping in read, where coffer_fuse_exit could not reach it. libfuse opens it
    // close-on-exec already (3.14 does, through both mount paths); make sure anyway.
    session->device = fuse.session_fd(session->session);
    session->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    int status = fcntl(session->device, F_GETFL);
    if (session->wake < 0 || status < 0 || fcntl(session->device, F_SETFL, status | O_NONBLOCK) < 0
        || fcntl(session->device, F_SETFD, FD_CLOEXEC) < 0) {
        snprintf(error, capacity, "the FUSE device could not be set up: %s", strerror(errno));
        coffer_fuse_unmount_and_destroy(session);
        return NULL;
    }
    return session;
}

static void stop(coffer_fuse_session *session) {
    atomic_store(&session->stopping, 1);
    fuse.session_exit(session->session);
    uint64_t one = 1;
    ssize_t written = write(session->wake, &one, sizeof one);
    (void)written;  // the counter only fails to grow when it is already huge: still readable
}

void coffer_fuse_exit(coffer_fuse_session *session) {
    if (session != NULL) stop(session);
}

// Reads the next request into `buffer`, waiting for one when none is queued: its size, or 0 once
// the loop should end (the failure, if any, recorded). Another thread may take a request first:
// then this one waits again.
static int next_request(coffer_fuse_session *session, request_buffer *buffer) {
    struct pollfd watched[2] = {{.fd = session->device, .events = POLLIN}, {.fd = session->wake, .events = POLLIN}};
    while (!atomic_load(&session->stopping)) {
        buffer->flags = 0;
        int received = fuse.session_receive_buf(session->session, buffer);
        if (received > 0) return received;
        if (received == -EINTR) continue;
        if (received != -EAGAIN) {
            // 0: the session was told to exit, or the file system was unmounted (libfuse turns
            // the kernel's ENODEV into an exit).
            int expected = 0;
            if (received < 0) atomic_compare_exchange_strong(&session->error, &expected, received);
            return 0;
        }
        if (poll(watched, 2, -1) < 0 && errno != EINTR) {
            int expected = 0;
            atomic_compare_exchange_strong(&session->error, &expected, -errno);
            return 0;
        }
        if (watched[1].revents != 0) return 0;
    }
    return 0;
}

// One thread of the loop: take the next request, let libfuse decode it and call the operation.
// Every idle thread waits in poll, so a request may wake several; the one that just answered is
// usually first back and takes it. (Taking turns on a mutex, so that one thread waited at a
// time, made each request hand the turn to another thread: `ls -lR` of 100,000 files took 30 %
// longer.)
static void *serve(void *argument) {
    coffer_fuse_session *session = argument;
    request_buffer buffer;
    memset(&buffer, 0, sizeof buffer);
    for (;;) {
        int received = next_request(session, &buffer);
        if (received <= 0) break;
        fuse.session_process_buf(session->session, &buffer);
    }
    stop(session);  // whatever ended this thread ends the others
    free(buffer.mem);
    return NULL;
}

int coffer_fuse_run(coffer_fuse_session *session, int threads) {
    if (threads < 1) threads = 1;
    if (threads > 64) threads = 64;
    pthread_t helpers[64];
    int started = 0;
    // Signals are for the application's threads: the helpers start with all of them blocked.
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    for (int i = 1; i < threads; i++) {
        if (pthread_create(&helpers[started], NULL, serve, session) == 0) started++;
    }
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    serve(session);
    for (int i = 0; i < started; i++) pthread_join(helpers[i], NULL);
    return atomic_load(&session->error);
}

void coffer_fuse_unmount_and_destroy(coffer_fuse_session *session) {
    if (session == NULL) return;
    // libfuse closes the device (which makes the kernel fail whatever is still queued) and
    // detaches the mount: umount2 as root, fusermount3 -u -z otherwise.
    fuse.session_unmount(session->session);
    fuse.session_destroy(session->session);
    if (session->wake >= 0) close(session->wake);
    free(session);
}

int coffer_fuse_notify_inval_inode(coffer_fuse_session *session, uint64_t ino, int64_t offset, int64_t length) {
    return fuse.notify_inval_inode(session->session, ino, (off_t)offset, (off_t)length);
}

int coffer_fuse_notify_inval_entry(coffer_fuse_session *session, uint64_t parent, const char *name) {
    return fuse.notify_inval_entry(session->session, parent, name, strlen(name));
}

int coffer_fuse_notify_delete(coffer_fuse_session *session, uint64_t parent, uint64_t child, const char *name) {
    return fuse.notify_delete(session->session, parent, child, name, strlen(name));
}

// Answers: the plain ones pass straight through; entries and opened files are put in libfuse's records.

#define REQUEST(request) ((request_t)(request))

static entry_param entry_of(uint64_t ino, uint64_t generation, const struct stat *attr, double attr_timeout,
                            double entry_timeout) {
    entry_param entry = {.ino = ino, .generation = generation, .attr_timeout = attr_timeout,
                         .entry_timeout = entry_timeout};
    if (attr != NULL) entry.attr = *attr;
    return entry;
}

static file_info opened(uint64_t fh, int direct_io, int keep_cache) {
    file_info fi = {.fh = fh, .direct_io = direct_io != 0, .keep_cache = keep_cache != 0};
    return fi;
}

int coffer_fuse_reply_err(coffer_fuse_request *request, int error) { return fuse.reply_err(REQUEST(request), error); }
void coffer_fuse_reply_none(coffer_fuse_request *request) { fuse.reply_none(REQUEST(request)); }
int coffer_fuse_interrupted(coffer_fuse_request *request) { return fuse.req_interrupted(REQUEST(request)); }

int coffer_fuse_reply_attr(coffer_fuse_request *request, const struct stat *attr, double timeout) {
    return fuse.reply_attr(REQUEST(request), attr, timeout);
}

int coffer_fuse_reply_readlink(coffer_fuse_request *request, const char *target) {
    return fuse.reply_readlink(REQUEST(request), target);
}

int coffer_fuse_reply_buf(coffer_fuse_request *request, const char *data, size_t size) {
    return fuse.reply_buf(REQUEST(request), data, size);
}

int coffer_fuse_reply_statfs(coffer_fuse_request *request, const struct statvfs *stats) {
    return fuse.reply_statfs(REQUEST(request), stats);
}

int coffer_fuse_reply_write(coffer_fuse_request *request, size_t count) {
    return fuse.reply_write(REQUEST(request), count);
}

int coffer_fuse_reply_xattr(coffer_fuse_request *request, size_t size) {
    return fuse.reply_xattr(REQUEST(request), size);
}

int coffer_fuse_reply_lseek(coffer_fuse_request *request, int64_t offset) {
    return fuse.reply_lseek(REQUEST(request), (off_t)offset);
}

int coffer_fuse_reply_entry(coffer_fuse_request *request, uint64_t ino, uint64_t generation,
                            const struct stat *attr, double attr_timeout, double entry_timeout) {
    entry_param entry = entry_of(ino, generation, attr, attr_timeout, entry_timeout);
    return fuse.reply_entry(REQUEST(request), &entry);
}

int coffer_fuse_reply_open(coffer_fuse_request *request, uint64_t fh, int direct_io, int keep_cache) {
    file_info fi = opened(fh, direct_io, keep_cache);
    return fuse.reply_open(REQUEST(request), &fi);
}

int coffer_fuse_reply_create(coffer_fuse_request *request, uint64_t ino, uint64_t generation,
                             const struct stat *attr, double attr_timeout, double entry_timeout,
                             uint64_t fh, int direct_io, int keep_cache) {
    entry_param entry = entry_of(ino, generation, attr, attr_timeout, entry_timeout);
    file_info fi = opened(fh, direct_io, keep_cache);
    return fuse.reply_create(REQUEST(request), &entry, &fi);
}

size_t coffer_fuse_add_direntry(coffer_fuse_request *request, char *buffer, size_t remaining,
                                const char *name, const struct stat *attr, int64_t next_offset) {
    return fuse.add_direntry(REQUEST(request), buffer, remaining, name, attr, (off_t)next_offset);
}

size_t coffer_fuse_add_direntry_plus(coffer_fuse_request *request, char *buffer, size_t remaining,
                                     const char *name, uint64_t ino, uint64_t generation,
                                     const struct stat *attr, double attr_timeout, double entry_timeout,
                                     int64_t next_offset) {
    entry_param entry = entry_of(ino, generation, attr, attr_timeout, entry_timeout);
    return fuse.add_direntry_plus(REQUEST(request), buffer, remaining, name, &entry, (off_t)next_offset);
}

void coffer_fuse_request_ids(coffer_fuse_request *request, uid_t *uid, gid_t *gid, pid_t *pid) {
    const request_context *context = fuse.req_ctx(REQUEST(request));
    if (uid != NULL) *uid = context->uid;
    if (gid != NULL) *gid = context->gid;
    if (pid != NULL) *pid = context->pid;
}
