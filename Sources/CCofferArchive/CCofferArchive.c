#include "CCofferArchive.h"

#include <archive.h>
#include <archive_entry.h>
#include <dlfcn.h>
#include <locale.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

// The libarchive functions used, looked up once: the header gives their types, the library
// is opened with dlopen, so nothing here is linked against it.
static struct {
    int loaded;
    __typeof__(&archive_read_new) read_new;
    __typeof__(&archive_read_support_filter_all) support_filter_all;
    __typeof__(&archive_read_support_format_all) support_format_all;
    __typeof__(&archive_read_support_format_raw) support_format_raw;
    __typeof__(&archive_read_open_fd) open_fd;
    __typeof__(&archive_read_next_header) next_header;
    __typeof__(&archive_read_data_skip) data_skip;
    __typeof__(&archive_read_data) read_data;
    __typeof__(&archive_read_free) read_free;
    __typeof__(&archive_error_string) error_string;
    __typeof__(&archive_format_name) format_name;
    __typeof__(&archive_filter_count) filter_count;
    __typeof__(&archive_filter_name) filter_name;
    __typeof__(&archive_entry_pathname_utf8) pathname_utf8;
    __typeof__(&archive_entry_pathname) pathname;
    __typeof__(&archive_entry_size) size;
    __typeof__(&archive_entry_size_is_set) size_is_set;
    __typeof__(&archive_entry_filetype) filetype;
} lib;

static pthread_once_t archive_once = PTHREAD_ONCE_INIT;

static void load(void) {
    void *library = dlopen("libarchive.so.13", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) return;
#define FIND(field, name) lib.field = (__typeof__(lib.field))dlsym(library, name)
    FIND(read_new, "archive_read_new");
    FIND(support_filter_all, "archive_read_support_filter_all");
    FIND(support_format_all, "archive_read_support_format_all");
    FIND(support_format_raw, "archive_read_support_format_raw");
    FIND(open_fd, "archive_read_open_fd");
    FIND(next_header, "archive_read_next_header");
    FIND(data_skip, "archive_read_data_skip");
    FIND(read_data, "archive_read_data");
    FIND(read_free, "archive_read_free");
    FIND(error_string, "archive_error_string");
    FIND(format_name, "archive_format_name");
    FIND(filter_count, "archive_filter_count");
    FIND(filter_name, "archive_filter_name");
    FIND(pathname_utf8, "archive_entry_pathname_utf8");
    FIND(pathname, "archive_entry_pathname");
    FIND(size, "archive_entry_size");
    FIND(size_is_set, "archive_entry_size_is_set");
    FIND(filetype, "archive_entry_filetype");
#undef FIND
    lib.loaded = lib.read_new && lib.support_filter_all && lib.support_format_all && lib.support_format_raw && lib.open_fd && lib.next_header
        && lib.data_skip && lib.read_data && lib.read_free && lib.error_string && lib.format_name && lib.filter_count && lib.filter_name
        && lib.pathname_utf8 && lib.pathname && lib.size && lib.size_is_set && lib.filetype;
}

int coffer_archive_available(void) {
    pthread_once(&archive_once, load);
    return lib.loaded;
}

static void copy_text(char *into, size_t capacity, const char *text) {
    snprintf(into, capacity, "%s", text != NULL ? text : "");
}

static int read_contents(int fd, int64_t listed, int64_t counted, int64_t budget, coffer_archive_entry_sink sink,
                         coffer_archive_stop stop, void *context, coffer_archive_summary *summary,
                         char *error, size_t capacity);

int coffer_archive_contents(int fd, int64_t listed, int64_t counted, int64_t budget, coffer_archive_entry_sink sink,
                            coffer_archive_stop stop, void *context, coffer_archive_summary *summary,
                            char *error, size_t capacity) {
    memset(summary, 0, sizeof *summary);
    error[0] = '\0';
    if (!coffer_archive_available()) {
        copy_text(error, capacity, "libarchive (libarchive.so.13) could not be loaded");
        return -1;
    }
    // libarchive converts names to the thread's locale; a process that never called
    // setlocale is in "C", where names that are not ASCII have no form. Read in UTF-8.
    locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
    locale_t previous = utf8 != (locale_t)0 ? uselocale(utf8) : (locale_t)0;
    int result = read_contents(fd, listed, counted, budget, sink, stop, context, summary, error, capacity);
    if (utf8 != (locale_t)0) {
        uselocale(previous);
        freelocale(utf8);
    }
    return result;
}

enum { SKIPPED = 0, SKIP_FAILED = -1, SKIP_STOPPED = 1 };

// Goes past an entry's data. In a compressed stream (tar.gz, tar.bz2…) that means
// decompressing it, so it is read in blocks: the bytes decompressed count against `budget`
// and `stop` is asked between blocks, so a small file that expands to gigabytes stops soon.
// Elsewhere libarchive skips without reading (a seek). `block` (skip_block bytes) is the
// listing's own: a `static __thread` one would be 64 KiB of TLS in every thread of the process
// (CivetWeb's workers, the front's links…), zeroed as each starts.
enum { skip_block = 64 * 1024 };

static int skip_data(struct archive *archive, int compressed, char *block, int64_t *budget, coffer_archive_stop stop,
                     void *context) {
    if (!compressed) return lib.data_skip(archive) < ARCHIVE_WARN ? SKIP_FAILED : SKIPPED;
    for (;;) {
        if (stop(context)) return SKIP_STOPPED;
        la_ssize_t count = lib.read_data(archive, block, skip_block);
        if (count == 0) return SKIPPED;
        if (count < ARCHIVE_WARN) return SKIP_FAILED;
        if (count > 0) *budget -= count;
        if (*budget < 0) return SKIP_STOPPED;
    }
}

static int read_contents(int fd, int64_t listed, int64_t counted, int64_t budget, coffer_archive_entry_sink sink,
                         coffer_archive_stop stop, void *context, coffer_archive_summary *summary,
                         char *error, size_t capacity) {
    char *block = malloc(skip_block);
    struct archive *archive = block != NULL ? lib.read_new() : NULL;
    if (archive == NULL) {
        free(block);
        copy_text(error, capacity, "out of memory");
        return -1;
    }
    lib.support_filter_all(archive);
    lib.support_format_all(archive);
    // A lone compressed file (notes.txt.gz) reads as one entry of the `raw` format.
    lib.support_format_raw(archive);
    if (lib.open_fd(archive, fd, 64 * 1024) != ARCHIVE_OK) {
        copy_text(error, capacity, lib.error_string(archive));
        lib.read_free(archive);
        free(block);
        return -1;
    }
    struct archive_entry *entry = NULL;
    int result = 0;
    int compressed = 0;
    for (;;) {
        if (stop(context)) break;
        if (summary->count >= counted) break;
        int status = lib.next_header(archive, &entry);
        if (status == ARCHIVE_EOF) {
            summary->complete = 1;
            break;
        }
        if (status < ARCHIVE_WARN) {
            copy_text(error, capacity, lib.error_string(archive));
            result = -1;
            break;
        }
        if (summary->count == 0) {
            copy_text(summary->format, sizeof summary->format, lib.format_name(archive));
            // Filter 0 is the outermost; the last one is `none` for an uncompressed archive.
            int filters = lib.filter_count(archive);
            for (int i = 0; i < filters; i++) {
                const char *name = lib.filter_name(archive, i);
                if (name != NULL && strcmp(name, "none") != 0) {
                    copy_text(summary->filter, sizeof summary->filter, name);
                    compressed = 1;
                    break;
                }
            }
        }
        int64_t size = lib.size_is_set(entry) ? lib.size(entry) : -1;
        if (size > 0) summary->declared_bytes += size;
        if (summary->count < listed) {
            const char *path = lib.pathname_utf8(entry);
            if (path == NULL) path = lib.pathname(entry);
            sink(context, path != NULL ? path : "", size, lib.filetype(entry) == AE_IFDIR);
        }
        summary->count += 1;
        int skipped = skip_data(archive, compressed, block, &budget, stop, context);
        if (skipped == SKIP_STOPPED) break;
        if (skipped == SKIP_FAILED) {
            copy_text(error, capacity, lib.error_string(archive));
            result = -1;
            break;
        }
    }
    lib.read_free(archive);
    free(block);
    // An archive whose first header is unreadable is not an archive at all.
    if (result != 0 && summary->count == 0 && error[0] == '\0') copy_text(error, capacity, "not an archive");
    return result;
}

// MARK: Writing zip files, streamed

static struct {
    int loaded;
    __typeof__(&archive_write_new) write_new;
    __typeof__(&archive_write_set_format_zip) set_format_zip;
    __typeof__(&archive_write_set_format_option) set_format_option;
    __typeof__(&archive_write_set_bytes_per_block) bytes_per_block;
    __typeof__(&archive_write_open) write_open;
    __typeof__(&archive_write_header) write_header;
    __typeof__(&archive_write_data) write_data;
    __typeof__(&archive_write_finish_entry) finish_entry;
    __typeof__(&archive_write_close) write_close;
    __typeof__(&archive_write_free) write_free;
    __typeof__(&archive_entry_new) entry_new;
    __typeof__(&archive_entry_free) entry_free;
    __typeof__(&archive_entry_set_pathname_utf8) set_pathname_utf8;
    __typeof__(&archive_entry_set_size) set_size;
    __typeof__(&archive_entry_set_filetype) set_filetype;
    __typeof__(&archive_entry_set_perm) set_perm;
    __typeof__(&archive_entry_set_mtime) set_mtime;
} zip;

static pthread_once_t zip_once = PTHREAD_ONCE_INIT;

static void load_zip(void) {
    void *library = dlopen("libarchive.so.13", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) return;
#define FIND(field, name) zip.field = (__typeof__(zip.field))dlsym(library, name)
    FIND(write_new, "archive_write_new");
    FIND(set_format_zip, "archive_write_set_format_zip");
    FIND(set_format_option, "archive_write_set_format_option");
    FIND(bytes_per_block, "archive_write_set_bytes_per_block");
    FIND(write_open, "archive_write_open");
    FIND(write_header, "archive_write_header");
    FIND(write_data, "archive_write_data");
    FIND(finish_entry, "archive_write_finish_entry");
    FIND(write_close, "archive_write_close");
    FIND(write_free, "archive_write_free");
    FIND(entry_new, "archive_entry_new");
    FIND(entry_free, "archive_entry_free");
    FIND(set_pathname_utf8, "archive_entry_set_pathname_utf8");
    FIND(set_size, "archive_entry_set_size");
    FIND(set_filetype, "archive_entry_set_filetype");
    FIND(set_perm, "archive_entry_set_perm");
    FIND(set_mtime, "archive_entry_set_mtime");
#undef FIND
    zip.loaded = zip.write_new && zip.set_format_zip && zip.bytes_per_block && zip.write_open && zip.write_header
        && zip.set_format_option && zip.write_data && zip.finish_entry && zip.write_close && zip.write_free && zip.entry_new && zip.entry_free
        && zip.set_pathname_utf8 && zip.set_size && zip.set_filetype && zip.set_perm && zip.set_mtime;
}

struct coffer_zip {
    struct archive *archive;
    coffer_zip_sink sink;
    void *context;
};

static la_ssize_t zip_write(struct archive *archive, void *data, const void *bytes, size_t length) {
    (void)archive;
    struct coffer_zip *writer = data;
    return writer->sink(writer->context, bytes, length) ? (la_ssize_t)length : -1;
}

coffer_zip *coffer_zip_open(coffer_zip_sink sink, void *context) {
    pthread_once(&zip_once, load_zip);
    if (!zip.loaded) return NULL;
    struct coffer_zip *writer = calloc(1, sizeof *writer);
    if (writer == NULL) return NULL;
    writer->sink = sink;
    writer->context = context;
    writer->archive = zip.write_new();
    // Written as it comes, not in blocks padded for tapes. Names are UTF-8 and say so (the
    // zip's language-encoding flag, bit 11), whatever this process's locale: without it, an
    // unzip reads a Chinese name as CP437.
    if (writer->archive == NULL || zip.set_format_zip(writer->archive) != ARCHIVE_OK
        || zip.set_format_option(writer->archive, "zip", "hdrcharset", "UTF-8") != ARCHIVE_OK
        || zip.bytes_per_block(writer->archive, 0) != ARCHIVE_OK
        || zip.write_open(writer->archive, writer, NULL, zip_write, NULL) != ARCHIVE_OK) {
        if (writer->archive != NULL) zip.write_free(writer->archive);
        free(writer);
        return NULL;
    }
    return writer;
}

int coffer_zip_add(coffer_zip *writer, const char *path, int64_t size, int64_t mtime, int is_folder) {
    struct archive_entry *entry = zip.entry_new();
    if (entry == NULL) return 0;
    zip.set_pathname_utf8(entry, path);
    zip.set_filetype(entry, is_folder ? AE_IFDIR : AE_IFREG);
    zip.set_perm(entry, is_folder ? 0755 : 0644);
    zip.set_size(entry, is_folder ? 0 : size);
    zip.set_mtime(entry, (time_t)mtime, 0);
    int done = zip.write_header(writer->archive, entry) == ARCHIVE_OK;
    zip.entry_free(entry);
    return done;
}

int coffer_zip_write(coffer_zip *writer, const void *bytes, size_t length) {
    return zip.write_data(writer->archive, bytes, length) == (la_ssize_t)length;
}

int coffer_zip_close(coffer_zip *writer, int finish) {
    int done = 1;
    if (finish) done = zip.write_close(writer->archive) == ARCHIVE_OK;
    zip.write_free(writer->archive);
    free(writer);
    return done;
}
