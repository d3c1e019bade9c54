// HTTP requests through the system's libcurl, loaded when the first request is made: a
// process that never reaches a server never maps libcurl and the TLS libraries behind it.
#ifndef CCOFFER_HTTP_H
#define CCOFFER_HTTP_H

#include <stddef.h>
#include <stdint.h>

/// Receives response bytes (a header line, or a piece of the body): return `length` to go
/// on, anything else to stop the transfer.
typedef size_t (*coffer_http_sink)(void *context, const char *bytes, size_t length);

/// Fills `buffer` with up to `capacity` bytes of the request body: the count written, 0 at
/// the end, or `COFFER_HTTP_ABORT` to stop the transfer.
typedef size_t (*coffer_http_source)(void *context, char *buffer, size_t capacity);
#define COFFER_HTTP_ABORT ((size_t)0x10000000)

typedef struct {
    const char *method;            // GET, HEAD, PUT, POST, DELETE
    const char *url;
    const char *const *headers;    // "Name: value"
    size_t header_count;
    long long body_length;         // -1: no body
    coffer_http_source body;       // with `body_length` >= 0
    void *body_context;
    coffer_http_sink on_header;
    coffer_http_sink on_body;
    void *response_context;
    long connect_timeout_ms;       // to connect, TLS included
    long stall_timeout_s;          // no byte moving for this long ends the transfer
    const char *ca_file;           // extra certificate authorities, or NULL
    long max_redirects;            // 0: none followed; otherwise at most this many, to http and https only
    char *effective_url;           // where the answer came from (after redirects), or NULL
    size_t effective_url_capacity;
} coffer_http_request;

/// Whether libcurl could be loaded (tried once).
int coffer_http_available(void);

/// A connection cache for requests made one at a time (keep-alive); NULL without libcurl.
void *coffer_http_session_new(void);
void coffer_http_session_free(void *session);

/// Performs `request` on `session`. Returns 0 and the status, or libcurl's error code with
/// its message in `error` (at least 256 bytes); -1 when libcurl is missing.
int coffer_http_perform(void *session, const coffer_http_request *request, long *status, char *error);

/// libcurl's error codes the caller tells apart.
enum {
    COFFER_HTTP_COULDNT_RESOLVE = 6,
    COFFER_HTTP_COULDNT_CONNECT = 7,
    COFFER_HTTP_TIMEOUT = 28,
    COFFER_HTTP_WRITE_STOPPED = 23,
    COFFER_HTTP_READ_STOPPED = 42,
    COFFER_HTTP_SSL = 35,
    COFFER_HTTP_PEER_CERTIFICATE = 60,
    COFFER_HTTP_GOT_NOTHING = 52,
    COFFER_HTTP_SEND_ERROR = 55,
    COFFER_HTTP_RECV_ERROR = 56,
    COFFER_HTTP_PARTIAL_FILE = 18,
    COFFER_HTTP_TOO_MANY_REDIRECTS = 47,
};

#endif
