// Images through the system's libvips (8.x), loaded the first time an image is asked for:
// a process that never previews a file never maps libvips and the ~80 libraries it needs.
// Files are read from descriptors the caller opened (confined by the backend), never by name.
#ifndef CCOFFER_VIPS_H
#define CCOFFER_VIPS_H

#include <stddef.h>
#include <stdint.h>

/// Whether libvips could be loaded and started (tried once).
int coffer_vips_available(void);

/// What an image's header says, read without decoding its pixels.
typedef struct {
    int width;
    int height;
    /// Pages (PDF) or frames (GIF, WebP); 1 for a still image.
    int pages;
    /// EXIF orientation, 1–8; 0 when the file does not say.
    int orientation;
    /// The loader libvips chose, such as `jpegload_source`.
    char loader[64];
} coffer_image_header;

/// Reads the header of the image in `fd` (the descriptor is duplicated, the caller keeps
/// its own). Returns a handle for `coffer_vips_field`, released with `coffer_vips_release`,
/// or NULL with a message in `error`.
void *coffer_vips_open_header(int fd, coffer_image_header *header, char *error, size_t capacity);

/// A metadata field of an opened image as text (`exif-ifd2-DateTimeOriginal`, `pdf-title`),
/// or NULL when absent; free it with `coffer_vips_free`.
char *coffer_vips_field(void *image, const char *name);

void coffer_vips_release(void *image);

/// Makes a PNG thumbnail of the image in `fd` that fits in `size` × `size` (never enlarged),
/// with `count` tEXt chunks (`keys[i]` = `values[i]`). Refuses, before decoding, an image
/// declaring more than `max_pixels` pixels. On success returns 0 with the PNG in `*png`
/// otherwise -1 with a message in `error`, and 1 when
/// the image was refused for its size. The PNG is the caller's, freed with `free`.
int coffer_vips_thumbnail(int fd, int size, int64_t max_pixels, const char *const *keys, const char *const *values,
                          size_t count, void **png, size_t *length, int *width, int *height,
                          char *error, size_t capacity);

/// Frees a field from `coffer_vips_field`.
void coffer_vips_free(void *memory);

/// `png` again with `count` tEXt chunks right after its header, in `*labelled` (freed with
/// `free`). Needs zlib only (for the chunks' CRC), not libvips. Returns 0, or -1.
int coffer_png_label(const void *png, size_t length, const char *const *keys, const char *const *values,
                     size_t count, void **labelled, size_t *labelled_length);

// GLib (libglib-2.0.so.0, which libvips is built on), loaded on its own when first used: the
// thumbnail cache names files as GLib-based desktops do, without loading libvips.

/// `file://` and `path` escaped as `g_filename_to_uri` does, or NULL (a relative path, or
/// GLib missing). Free it with `coffer_glib_free`.
char *coffer_file_uri(const char *path);

/// `text` escaped for a URI by `g_uri_escape_string`, leaving the characters in `allowed`
/// (and the unreserved ones) as they are, or NULL. Free it with `coffer_glib_free`.
char *coffer_uri_escape(const char *text, const char *allowed);

/// The MD5 of `text` in lowercase hexadecimal into `digest` (33 bytes with the NUL), by
/// `g_compute_checksum_for_string`: the name the standard gives a URI's thumbnails. Returns 1, or 0.
int coffer_md5_hex(const char *text, char *digest);

void coffer_glib_free(void *memory);

#endif
