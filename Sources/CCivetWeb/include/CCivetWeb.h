// An HTTP/1.1 and WebSocket server from the system's CivetWeb (libcivetweb1), loaded the first
// time `coffer serve` starts one: no other command maps it. The header's types come from
// libcivetweb-dev; requests reach Swift as plain C structs, answers go out through the writers.
#ifndef CCIVETWEB_H
#define CCIVETWEB_H

#include <stddef.h>
#include <stdint.h>

/// Whether libcivetweb could be loaded, with WebSocket support (tried once).
int coffer_web_available(void);

/// What a request says, valid during the callback it is given to.
typedef struct {
    const char *method;
    /// The path, decoded once (`%2F` is a `/` by now; a `%00` ends it); the query, not decoded,
    /// without its `?`, or "".
    const char *path;
    const char *query;
    /// Headers, NULL when absent.
    const char *host;
    const char *origin;
    const char *cookie;
    const char *authorization;
    const char *range;
    const char *accept_language;
    const char *content_type;
    /// Set by a reverse proxy; trusted only when the server is told to.
    const char *forwarded_for;
    /// The body's length, -1 when not given.
    int64_t content_length;
    /// The client's address as the socket sees it.
    const char *remote_address;
} coffer_web_request;

typedef struct coffer_web_server coffer_web_server;

typedef struct {
    /// An HTTP request: answer it with the writers below; returns the status sent.
    int (*request)(void *context, void *connection, const coffer_web_request *request);
    /// A WebSocket asks to connect: 0 accepts, anything else refuses (403).
    int (*ws_connect)(void *context, void *connection, const coffer_web_request *request);
    /// The WebSocket is open.
    void (*ws_ready)(void *context, void *connection);
    /// A frame came: its opcode (with the FIN bit, 0x80) and payload; return 0 to close.
    int (*ws_data)(void *context, void *connection, int bits, const char *data, size_t length);
    /// The WebSocket closed.
    void (*ws_closed)(void *context, void *connection);
} coffer_web_handlers;

/// Listens on `address` ("127.0.0.1:8080", or ":0" ports are chosen by the system) with
/// `threads` workers (each open WebSocket holds one). Returns the server, or NULL with a
/// message in `error`. `*port` is the port it listens on.
coffer_web_server *coffer_web_start(const char *address, int threads, coffer_web_handlers handlers, void *context,
                                    int *port, char *error, size_t capacity);
/// The same over TLS: `certificate` (its chain) and `key` are PEM files, read with the system's
/// OpenSSL (libssl.so.3, loaded now); NULL with the reason when either cannot be used.
coffer_web_server *coffer_web_start_tls(const char *address, int threads, coffer_web_handlers handlers, void *context,
                                        const char *certificate, const char *key, int *port, char *error, size_t capacity);

/// Stops listening and ends every connection (ws_closed is called for each WebSocket).
void coffer_web_stop(coffer_web_server *server);

/// Writes a response's status line and headers (`lines`: "Name: value\r\n"…, may be "").
int coffer_web_respond(void *connection, int status, const char *lines, int64_t length);
/// Writes body bytes; returns what was written, or -1 when the client is gone.
int coffer_web_write(void *connection, const void *bytes, size_t length);
/// Sends `length` bytes of the file `fd` from `offset` as the rest of the answer, straight from
/// the file to the client (the front's sendfile), after the head already written: the bytes sent
/// (fewer than `length` when not all could be; the connection is then closed), or -2 when this
/// connection cannot (nothing was written: write the bytes instead).
int64_t coffer_web_send_file(void *connection, int fd, int64_t offset, int64_t length);

/// A header of the request being answered, NULL when absent.
const char *coffer_web_header(void *connection, const char *name);
/// Reads up to `length` bytes of the request's body: the count, 0 at its end, -1 on an error.
int coffer_web_read(void *connection, void *bytes, size_t length);
/// Sends one WebSocket message (opcode 1 text, 2 binary, 8 close); -1 when the peer is gone.
int coffer_web_ws_send(void *connection, int opcode, const void *bytes, size_t length);

/// The value of `name` in a query string, decoded (`%2F` and `+`), into `value`; its length,
/// -1 when absent, -2 when longer than `capacity`.
int coffer_web_query_value(const char *query, const char *name, char *value, size_t capacity);
/// The value of cookie `name` in a Cookie header; as above.
int coffer_web_cookie_value(const char *cookie, const char *name, char *value, size_t capacity);

#endif
