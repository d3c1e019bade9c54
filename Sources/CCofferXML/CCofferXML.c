#include "CCofferXML.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

// libxml2's reader interface (libxml/xmlreader.h), declared here because its headers are
// not on the default include path; these signatures are libxml2's stable ABI. The library
// is opened with dlopen, so nothing here is linked against it.
typedef void *coffer_reader;
enum { XML_PARSE_NOERROR = 1 << 5, XML_PARSE_NOWARNING = 1 << 6, XML_PARSE_NONET = 1 << 11, XML_PARSE_NOCDATA = 1 << 14 };
enum { NODE_ELEMENT = 1, NODE_TEXT = 3, NODE_CDATA = 4, NODE_WHITESPACE = 14, NODE_SIGNIFICANT_WHITESPACE = 13,
       NODE_END_ELEMENT = 15 };

static struct {
    int loaded;
    coffer_reader (*reader_for_memory)(const char *, int, const char *, const char *, int);
    int (*read)(coffer_reader);
    int (*node_type)(coffer_reader);
    const unsigned char *(*local_name)(coffer_reader);
    const unsigned char *(*namespace_uri)(coffer_reader);
    const unsigned char *(*value)(coffer_reader);
    int (*is_empty)(coffer_reader);
    void (*free_reader)(coffer_reader);
    // For namespace checks (a prefix never declared, `xmlns:p=""`), which libxml2 reports
    // as recoverable errors and reads on.
    const unsigned char *(*prefix)(coffer_reader);
    const unsigned char *(*qualified_name)(coffer_reader);
    int (*next_attribute)(coffer_reader);
    int (*to_element)(coffer_reader);
} xml;

static pthread_once_t xml_once = PTHREAD_ONCE_INIT;

static void load(void) {
    void *library = dlopen("libxml2.so.2", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) return;
    *(void **)&xml.reader_for_memory = dlsym(library, "xmlReaderForMemory");
    *(void **)&xml.read = dlsym(library, "xmlTextReaderRead");
    *(void **)&xml.node_type = dlsym(library, "xmlTextReaderNodeType");
    *(void **)&xml.local_name = dlsym(library, "xmlTextReaderConstLocalName");
    *(void **)&xml.namespace_uri = dlsym(library, "xmlTextReaderConstNamespaceUri");
    *(void **)&xml.value = dlsym(library, "xmlTextReaderConstValue");
    *(void **)&xml.is_empty = dlsym(library, "xmlTextReaderIsEmptyElement");
    *(void **)&xml.free_reader = dlsym(library, "xmlFreeTextReader");
    *(void **)&xml.prefix = dlsym(library, "xmlTextReaderConstPrefix");
    *(void **)&xml.qualified_name = dlsym(library, "xmlTextReaderConstName");
    *(void **)&xml.next_attribute = dlsym(library, "xmlTextReaderMoveToNextAttribute");
    *(void **)&xml.to_element = dlsym(library, "xmlTextReaderMoveToElement");
    xml.loaded = xml.reader_for_memory && xml.read && xml.node_type && xml.local_name && xml.namespace_uri && xml.value
        && xml.is_empty && xml.free_reader && xml.prefix && xml.qualified_name && xml.next_attribute && xml.to_element;
}

/// Whether the element the reader is on breaks XML Namespaces: a prefix no declaration binds,
/// or a prefix declared to the empty name (`xmlns:p=""`, which only XML 1.1 allows).
static int breaks_namespaces(coffer_reader reader, const char *uri) {
    // (libxml2 reads on: an unbound prefix stays in the local name, or has no namespace.)
    const char *local = (const char *)xml.local_name(reader);
    if (local != NULL && strchr(local, ':') != NULL) return 1;
    if (xml.prefix(reader) != NULL && (uri == NULL || *uri == '\0')) return 1;
    int broken = 0;
    while (!broken && xml.next_attribute(reader) == 1) {
        const char *name = (const char *)xml.qualified_name(reader);
        const char *value = (const char *)xml.value(reader);
        // (The default namespace, `xmlns=""`, may be undeclared; a prefix may not.)
        if (name != NULL && strncmp(name, "xmlns:", 6) == 0 && (value == NULL || *value == '\0')) broken = 1;
    }
    xml.to_element(reader);
    return broken;
}

enum { MAX_DEPTH = 64, MAX_PATH = 4096, MAX_TEXT = 1 << 20 };

/// A reader of `length` bytes that never reads the network; NULL with `*failure` -1 without
/// libxml2, 0 when the bytes cannot be read.
static coffer_reader open_reader(const char *bytes, size_t length, int *failure) {
    pthread_once(&xml_once, load);
    *failure = -1;
    if (!xml.loaded) return NULL;
    *failure = 0;
    if (length > (size_t)__INT_MAX__) return NULL;
    return xml.reader_for_memory(bytes, (int)length, NULL, NULL,
                                 XML_PARSE_NONET | XML_PARSE_NOCDATA | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
}

int coffer_xml_texts(const char *bytes, size_t length, coffer_xml_text callback, void *context) {
    int opened = 0;
    coffer_reader reader = open_reader(bytes, length, &opened);
    if (reader == NULL) return opened;
    char path[MAX_PATH];
    size_t ends[MAX_DEPTH];  // where the path ended before each open element
    char parent[MAX_DEPTH];  // whether each open element has elements inside it
    int depth = 0;
    path[0] = '\0';
    // The text of the element being read, grown as needed (on the heap: a thread-local
    // buffer this size would be carved out of every thread's stack).
    size_t text_capacity = 4096;
    char *text = malloc(text_capacity);
    if (text == NULL) { xml.free_reader(reader); return 0; }
    size_t text_length = 0;
    int result;
    int ok = 1;
    while ((result = xml.read(reader)) == 1) {
        int type = xml.node_type(reader);
        if (type == NODE_ELEMENT) {
            const char *name = (const char *)xml.local_name(reader);
            size_t current = strlen(path), added = strlen(name);
            if (depth >= MAX_DEPTH || current + added + 2 > MAX_PATH) { ok = 0; break; }
            if (depth > 0) parent[depth - 1] = 1;
            parent[depth] = 0;
            ends[depth++] = current;
            if (current > 0) path[current++] = '/';
            memcpy(path + current, name, added + 1);
            text_length = 0;
            text[0] = '\0';
            if (xml.is_empty(reader)) {
                callback(context, path, "");
                path[ends[--depth]] = '\0';
            }
        } else if (type == NODE_TEXT || type == NODE_CDATA || type == NODE_SIGNIFICANT_WHITESPACE) {
            const char *value = (const char *)xml.value(reader);
            size_t added = value ? strlen(value) : 0;
            if (text_length + added + 1 > MAX_TEXT) { ok = 0; break; }
            if (text_length + added + 1 > text_capacity) {
                while (text_length + added + 1 > text_capacity) text_capacity *= 2;
                char *grown = realloc(text, text_capacity);
                if (grown == NULL) { ok = 0; break; }
                text = grown;
            }
            memcpy(text + text_length, value, added);
            text_length += added;
            text[text_length] = '\0';
        } else if (type == NODE_END_ELEMENT) {
            if (depth == 0) { ok = 0; break; }
            if (!parent[depth - 1]) callback(context, path, text);
            text_length = 0;
            text[0] = '\0';
            path[ends[--depth]] = '\0';
        }
    }
    free(text);
    xml.free_reader(reader);
    return ok && result == 0;
}

int coffer_xml_events(const char *bytes, size_t length, coffer_xml_event callback, void *context) {
    int opened = 0;
    coffer_reader reader = open_reader(bytes, length, &opened);
    if (reader == NULL) return opened;
    int depth = 0, result = -1, ok = 1;
    while (ok && (result = xml.read(reader)) == 1) {
        int type = xml.node_type(reader);
        if (type == NODE_ELEMENT) {
            if (depth >= MAX_DEPTH) { ok = 0; break; }
            if (breaks_namespaces(reader, (const char *)xml.namespace_uri(reader))) { ok = 0; break; }
            const char *uri = (const char *)xml.namespace_uri(reader);
            const char *name = (const char *)xml.local_name(reader);
            if (!callback(context, COFFER_XML_START, uri ? uri : "", name ? name : "", NULL)) { ok = 0; break; }
            if (xml.is_empty(reader)) {
                if (!callback(context, COFFER_XML_END, NULL, NULL, NULL)) { ok = 0; break; }
            } else {
                depth++;
            }
        } else if (type == NODE_TEXT || type == NODE_CDATA || type == NODE_SIGNIFICANT_WHITESPACE || type == NODE_WHITESPACE) {
            const char *value = (const char *)xml.value(reader);
            if (value != NULL && strlen(value) > MAX_TEXT) { ok = 0; break; }
            if (depth > 0 && !callback(context, COFFER_XML_TEXT, NULL, NULL, value ? value : "")) { ok = 0; break; }
        } else if (type == NODE_END_ELEMENT) {
            if (depth == 0) { ok = 0; break; }
            depth--;
            if (!callback(context, COFFER_XML_END, NULL, NULL, NULL)) { ok = 0; break; }
        }
    }
    xml.free_reader(reader);
    return ok && result == 0;
}
