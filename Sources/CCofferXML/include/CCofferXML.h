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

/// What ``coffer_xml_events`` reports.
typedef enum {
    COFFER_XML_START = 1,  ///< an element opens: its namespace URI ("" for none) and local name
    COFFER_XML_END = 2,    ///< the element opened last closes
    COFFER_XML_TEXT = 3,   ///< text inside the element open (entities decoded)
} coffer_xml_event_kind;

/// Told each event in document order; returns 0 to stop reading (then the document counts as
/// refused).
typedef int (*coffer_xml_event)(void *context, coffer_xml_event_kind kind, const char *namespace_uri,
                                const char *name, const char *text);

/// Reads `length` bytes of XML as namespace-aware events (WebDAV's request bodies). Never
/// reads the network or external entities, and never expands entities into more than the
/// document (libxml2's defaults); refuses documents nested deeper than 64 and texts over 1 MiB.
/// Returns 1 for a well-formed document read to its end, 0 otherwise, -1 without libxml2.
int coffer_xml_events(const char *bytes, size_t length, coffer_xml_event callback, void *context);

#endif
