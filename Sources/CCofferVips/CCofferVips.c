#include "CCofferVips.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// libvips' headers need GLib's include paths; the handful of functions used are declared
// here instead, with the types they have in <vips/vips.h> (8.x, a stable ABI: libvips.so.42).
typedef struct _VipsImage VipsImage;
typedef struct _VipsSource VipsSource;
enum { ACCESS_SEQUENTIAL = 1, SIZE_DOWN = 2, FAIL_ON_ERROR = 2 };

static struct {
    int loaded;
    int (*init)(const char *argv0);
    void (*cache_set_max)(int max);
    char *(*error_buffer_copy)(void);
    void (*error_clear)(void);
    VipsSource *(*source_new_from_descriptor)(int descriptor);
    VipsImage *(*image_new_from_source)(VipsSource *source, const char *options, ...);
    int (*thumbnail_source)(VipsSource *source, VipsImage **out, int width, ...);
    int (*copy)(VipsImage *in, VipsImage **out, ...);
    int (*get_width)(const VipsImage *image);
    int (*get_height)(const VipsImage *image);
    int (*get_n_pages)(VipsImage *image);
    int (*get_int)(const VipsImage *image, const char *name, int *out);
    int (*get_as_string)(const VipsImage *image, const char *name, char **out);
    unsigned long (*get_typeof)(const VipsImage *image, const char *name);
    int (*remove)(VipsImage *image, const char *name);
    void (*set_string)(VipsImage *image, const char *name, const char *value);
    int (*pngsave_buffer)(VipsImage *in, void **buffer, size_t *length, ...);
    void (*object_unref)(void *object);
    void (*free)(void *memory);
} vips;

static pthread_once_t vips_once = PTHREAD_ONCE_INIT;

static void load(void) {
    void *library = dlopen("libvips.so.42", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) return;
#define FIND(field, name) vips.field = (__typeof__(vips.field))dlsym(library, name)
    FIND(init, "vips_init");
    FIND(cache_set_max, "vips_cache_set_max");
    FIND(error_buffer_copy, "vips_error_buffer_copy");
    FIND(error_clear, "vips_error_clear");
    FIND(source_new_from_descriptor, "vips_source_new_from_descriptor");
    FIND(image_new_from_source, "vips_image_new_from_source");
    FIND(thumbnail_source, "vips_thumbnail_source");
    FIND(copy, "vips_copy");
    FIND(get_width, "vips_image_get_width");
    FIND(get_height, "vips_image_get_height");
    FIND(get_n_pages, "vips_image_get_n_pages");
    FIND(get_int, "vips_image_get_int");
    FIND(get_as_string, "vips_image_get_as_string");
    FIND(get_typeof, "vips_image_get_typeof");
    FIND(remove, "vips_image_remove");
    FIND(set_string, "vips_image_set_string");
    FIND(pngsave_buffer, "vips_pngsave_buffer");
    FIND(object_unref, "g_object_unref");
    FIND(free, "g_free");
#undef FIND
    if (!(vips.init && vips.cache_set_max && vips.error_buffer_copy && vips.error_clear
          && vips.source_new_from_descriptor && vips.image_new_from_source && vips.thumbnail_source && vips.copy
          && vips.get_width && vips.get_height && vips.get_n_pages && vips.get_int && vips.get_as_string
          && vips.get_typeof && vips.remove && vips.set_string && vips.pngsave_buffer && vips.object_unref
          && vips.free)) return;
    if (vips.init("coffer") != 0) return;
    // No operation cache: a file changed under the same descriptor number must be read again,
    // and a folder of photos must not keep hundreds of decoded images alive.
    vips.cache_set_max(0);
    vips.loaded = 1;
}

int coffer_vips_available(void) {
    pthread_once(&vips_once, load);
    return vips.loaded;
}

static void take_error(char *error, size_t capacity, const char *fallback) {
    char *message = vips.error_buffer_copy();
    const char *text = (message != NULL && message[0] != '\0') ? message : fallback;
    snprintf(error, capacity, "%s", text);
    // libvips ends its messages with a newline.
    size_t length = strlen(error);
    while (length > 0 && (error[length - 1] == '\n' || error[length - 1] == ' ')) error[--length] = '\0';
    if (message != NULL) vips.free(message);
}

static void read_header(VipsImage *image, coffer_image_header *header) {
    header->width = vips.get_width(image);
    header->height = vips.get_height(image);
    header->pages = vips.get_n_pages(image);
    header->orientation = 0;
    if (vips.get_typeof(image, "orientation") != 0) vips.get_int(image, "orientation", &header->orientation);
    header->loader[0] = '\0';
    char *loader = NULL;
    if (vips.get_typeof(image, "vips-loader") != 0 && vips.get_as_string(image, "vips-loader", &loader) == 0) {
        snprintf(header->loader, sizeof header->loader, "%s", loader);
        vips.free(loader);
    }
}

void *coffer_vips_open_header(int fd, coffer_image_header *header, char *error, size_t capacity) {
    error[0] = '\0';
    if (!coffer_vips_available()) {
        snprintf(error, capacity, "libvips (libvips.so.42) could not be loaded");
        return NULL;
    }
    VipsSource *source = vips.source_new_from_descriptor(fd);
    if (source == NULL) {
        take_error(error, capacity, "the file could not be read");
        return NULL;
    }
    VipsImage *image = vips.image_new_from_source(source, "", "access", ACCESS_SEQUENTIAL, NULL);
    vips.object_unref(source);
    if (image == NULL) {
        take_error(error, capacity, "not an image libvips can read");
        return NULL;
    }
    read_header(image, header);
    return image;
}

char *coffer_vips_field(void *image, const char *name) {
    if (image == NULL || vips.get_typeof(image, name) == 0) return NULL;
    char *value = NULL;
    return vips.get_as_string(image, name, &value) == 0 ? value : NULL;
}

void coffer_vips_release(void *image) {
    if (image != NULL) vips.object_unref(image);
}

void coffer_vips_free(void *memory) {
    if (memory != NULL && vips.free != NULL) vips.free(memory);
}

// zlib's CRC-32, from the copy libpng already mapped into the process.
static unsigned long (*crc32_of)(unsigned long crc, const unsigned char *bytes, unsigned int length);
static pthread_once_t zlib_once = PTHREAD_ONCE_INIT;

static void load_zlib(void) {
    void *library = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library != NULL) crc32_of = (__typeof__(crc32_of))dlsym(library, "crc32");
}

static void put_be32(unsigned char *at, uint32_t value) {
    at[0] = (unsigned char)(value >> 24); at[1] = (unsigned char)(value >> 16);
    at[2] = (unsigned char)(value >> 8); at[3] = (unsigned char)value;
}

// Writes `png` again with uncompressed tEXt chunks right after IHDR, where a reader finds
// them in the first bytes of the file (libvips' own comments are zTXt, after pHYs).
static int insert_text_chunks(const unsigned char *png, size_t length, const char *const *keys,
                              const char *const *values, size_t count, void **out, size_t *out_length) {
    pthread_once(&zlib_once, load_zlib);
    const size_t header_end = 8 + 8 + 13 + 4;  // signature, then IHDR with its length, type and CRC
    if (crc32_of == NULL || length < header_end || memcmp(png + 12, "IHDR", 4) != 0) return -1;
    size_t added = 0;
    for (size_t i = 0; i < count; i++) added += 12 + strlen(keys[i]) + 1 + strlen(values[i]);
    unsigned char *result = malloc(length + added);
    if (result == NULL) return -1;
    memcpy(result, png, header_end);
    size_t at = header_end;
    for (size_t i = 0; i < count; i++) {
        size_t key = strlen(keys[i]), value = strlen(values[i]), data = key + 1 + value;
        put_be32(result + at, (uint32_t)data);
        memcpy(result + at + 4, "tEXt", 4);
        memcpy(result + at + 8, keys[i], key);
        result[at + 8 + key] = 0;
        memcpy(result + at + 9 + key, values[i], value);
        put_be32(result + at + 8 + data, (uint32_t)crc32_of(0, result + at + 4, (unsigned int)(4 + data)));
        at += 12 + data;
    }
    memcpy(result + at, png + header_end, length - header_end);
    *out = result;
    *out_length = length + added;
    return 0;
}

int coffer_png_label(const void *png, size_t length, const char *const *keys, const char *const *values,
                     size_t count, void **labelled, size_t *labelled_length) {
    return insert_text_chunks(png, length, keys, values, count, labelled, labelled_length);
}

int coffer_vips_thumbnail(int fd, int size, int64_t max_pixels, const char *const *keys, const char *const *values,
                          size_t count, void **png, size_t *length, int *width, int *height,
                          char *error, size_t capacity) {
    error[0] = '\0';
    *png = NULL;
    *length = 0;
    if (!coffer_vips_available()) {
        snprintf(error, capacity, "libvips (libvips.so.42) could not be loaded");
        return -1;
    }
    VipsSource *source = vips.source_new_from_descriptor(fd);
    if (source == NULL) {
        take_error(error, capacity, "the file could not be read");
        return -1;
    }
    // The header first: a file declaring more pixels than allowed is refused before any decoding.
    VipsImage *header = vips.image_new_from_source(source, "", "access", ACCESS_SEQUENTIAL, NULL);
    if (header == NULL) {
        vips.object_unref(source);
        take_error(error, capacity, "not an image libvips can read");
        return -1;
    }
    int64_t declared = (int64_t)vips.get_width(header) * (int64_t)vips.get_height(header);
    if (declared > max_pixels) {
        snprintf(error, capacity, "%d × %d pixels", vips.get_width(header), vips.get_height(header));
        vips.object_unref(header);
        vips.object_unref(source);
        return 1;
    }
    vips.object_unref(header);

    VipsImage *thumbnail = NULL;
    int failed = vips.thumbnail_source(source, &thumbnail, size, "height", size, "size", SIZE_DOWN,
                                       "fail_on", FAIL_ON_ERROR, NULL);
    vips.object_unref(source);
    if (failed != 0 || thumbnail == NULL) {
        take_error(error, capacity, "the image could not be decoded");
        return -1;
    }
    // A copy whose metadata can be changed: the thumbnail carries the Thumb:: keys and none
    // of the source's EXIF, XMP or colour profile.
    VipsImage *labelled = NULL;
    failed = vips.copy(thumbnail, &labelled, NULL);
    vips.object_unref(thumbnail);
    if (failed != 0) {
        take_error(error, capacity, "the thumbnail could not be made");
        return -1;
    }
    const char *dropped[] = { "exif-data", "xmp-data", "iptc-data", "icc-profile-data" };
    for (size_t i = 0; i < sizeof dropped / sizeof dropped[0]; i++) vips.remove(labelled, dropped[i]);
    *width = vips.get_width(labelled);
    *height = vips.get_height(labelled);
    void *encoded = NULL;
    size_t encoded_length = 0;
    failed = vips.pngsave_buffer(labelled, &encoded, &encoded_length, "bitdepth", 8, NULL);
    vips.object_unref(labelled);
    if (failed != 0) {
        take_error(error, capacity, "the thumbnail could not be written as PNG");
        return -1;
    }
    if (insert_text_chunks(encoded, encoded_length, keys, values, count, png, length) != 0) {
        vips.free(encoded);
        snprintf(error, capacity, "the thumbnail's PNG could not be labelled");
        return -1;
    }
    vips.free(encoded);
    return 0;
}

// MARK: GLib

static struct {
    int loaded;
    char *(*filename_to_uri)(const char *filename, const char *hostname, void **error);
    char *(*uri_escape_string)(const char *unescaped, const char *reserved_chars_allowed, int allow_utf8);
    char *(*compute_checksum_for_string)(int checksum_type, const char *str, long length);
    void (*error_free)(void *error);
    void (*free)(void *memory);
} glib;

static pthread_once_t glib_once = PTHREAD_ONCE_INIT;

static void load_glib(void) {
    void *library = dlopen("libglib-2.0.so.0", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) return;
    glib.filename_to_uri = (__typeof__(glib.filename_to_uri))dlsym(library, "g_filename_to_uri");
    glib.uri_escape_string = (__typeof__(glib.uri_escape_string))dlsym(library, "g_uri_escape_string");
    glib.compute_checksum_for_string = (__typeof__(glib.compute_checksum_for_string))dlsym(library, "g_compute_checksum_for_string");
    glib.error_free = (__typeof__(glib.error_free))dlsym(library, "g_error_free");
    glib.free = (__typeof__(glib.free))dlsym(library, "g_free");
    glib.loaded = glib.filename_to_uri && glib.uri_escape_string && glib.compute_checksum_for_string && glib.error_free
        && glib.free;
}

static int glib_available(void) {
    pthread_once(&glib_once, load_glib);
    return glib.loaded;
}

char *coffer_file_uri(const char *path) {
    if (!glib_available()) return NULL;
    void *error = NULL;
    char *uri = glib.filename_to_uri(path, NULL, &error);
    if (error != NULL) glib.error_free(error);
    return uri;
}

char *coffer_uri_escape(const char *text, const char *allowed) {
    return glib_available() ? glib.uri_escape_string(text, allowed, 0) : NULL;
}

int coffer_md5_hex(const char *text, char *digest) {
    if (!glib_available()) return 0;
    enum { CHECKSUM_MD5 = 0 };  // G_CHECKSUM_MD5
    char *hex = glib.compute_checksum_for_string(CHECKSUM_MD5, text, -1);
    if (hex == NULL || strlen(hex) != 32) {
        if (hex != NULL) glib.free(hex);
        return 0;
    }
    memcpy(digest, hex, 33);
    glib.free(hex);
    return 1;
}

void coffer_glib_free(void *memory) {
    if (memory != NULL && glib.free != NULL) glib.free(memory);
}
