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

#endif
