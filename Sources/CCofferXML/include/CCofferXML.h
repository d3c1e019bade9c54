// Reading XML documents (S3's answers) with the system's libxml2, loaded when the first
// document is read.
#ifndef CCOFFER_XML_H
#define CCOFFER_XML_H

#include <stddef.h>

/// Told, for each element without elements inside it, its path from the root
/// (`ListBucketResult/Contents/Key`) and its text (entities decoded; empty for `<a/>` or `<a></a>`).
typedef void (*coffer_xml_text)(void *context, const char *path, const char *text);

/// Reads `length` bytes of XML, reporting element texts in document order. Never reads
/// the network or external entities; refuses documents nested deeper than 64.
/// Returns 1 for a well-formed document, 0 for a malformed one, -1 without libxml2.
int coffer_xml_texts(const char *bytes, size_t length, coffer_xml_text callback, void *context);

#endif
