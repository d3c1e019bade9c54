// libmagic (libmagic-dev), for recognising a file's type by its content.
#ifndef COFFER_CMAGIC_SHIM_H
#define COFFER_CMAGIC_SHIM_H

#include <stddef.h>
#include <magic.h>

/// The flags Coffer opens libmagic with: the MIME type alone, errors as errors, and no
/// looking inside compressed files (a .gz is a gzip archive, whatever it holds).
static inline int coffer_magic_flags(void) {
    return MAGIC_MIME_TYPE | MAGIC_ERROR | MAGIC_NO_CHECK_COMPRESS;
}

#endif
