// Archives' tables of contents through the system's libarchive, loaded when an archive is
// first previewed. Entries are listed, never extracted: no entry's data is written anywhere.
#ifndef CCOFFER_ARCHIVE_H
#define CCOFFER_ARCHIVE_H

#include <stddef.h>
#include <stdint.h>

/// Whether libarchive could be loaded (tried once).
int coffer_archive_available(void);

typedef struct {
    /// libarchive's name of the format (`ZIP 2.0 (deflation)`, `GNU tar format`, `7-Zip`).
    char format[64];
    /// The outer compression (`gzip`, `xz`), empty when none.
    char filter[32];
    /// Entries read; all of them when `complete` is 1.
    int64_t count;
    /// Sizes of the entries read, as their headers declare them.
    int64_t declared_bytes;
    int complete;
} coffer_archive_summary;

/// Called for each of the first entries, in the archive's order.
typedef void (*coffer_archive_entry_sink)(void *context, const char *path, int64_t size, int is_folder);

/// Asked before each entry, and between blocks of a compressed entry's data: non-zero stops
/// the reading (the caller was cancelled).
typedef int (*coffer_archive_stop)(void *context);

/// Reads the table of contents of the archive in `fd` (read from its current offset; the
/// descriptor stays the caller's). The first `listed` entries go to `sink`; counting stops
/// after `counted` entries, when `stop` says so, or when going past entries' data in a
/// compressed archive has decompressed `budget` bytes (then `complete` is 0). `context` is
/// handed to both. Returns 0, or -1 with a message in `error` (not an archive, a damaged one,
/// libarchive missing).
int coffer_archive_contents(int fd, int64_t listed, int64_t counted, int64_t budget, coffer_archive_entry_sink sink,
                            coffer_archive_stop stop, void *context, coffer_archive_summary *summary,
                            char *error, size_t capacity);

/// A zip file written as it is made, handed to `sink` piece by piece (return 0 to stop).
typedef struct coffer_zip coffer_zip;
typedef int (*coffer_zip_sink)(void *context, const void *bytes, size_t length);
/// A new zip stream, or NULL without libarchive.
coffer_zip *coffer_zip_open(coffer_zip_sink sink, void *context);
/// Starts an entry (a folder, or a file of `size` bytes whose data follows); 0 on failure.
int coffer_zip_add(coffer_zip *writer, const char *path, int64_t size, int64_t mtime, int is_folder);
/// Data of the current file; 0 on failure.
int coffer_zip_write(coffer_zip *writer, const void *bytes, size_t length);
/// Ends the stream (with `finish`, writing its central directory) and frees it.
int coffer_zip_close(coffer_zip *writer, int finish);

#endif
