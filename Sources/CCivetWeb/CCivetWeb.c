#include "CCivetWeb.h"
#include "CCivetWebFront.h"

#include <civetweb.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The CivetWeb functions used, looked up once: the header gives their types, the library is
// opened with dlopen, so nothing here is linked against it.
static struct {
    int loaded;
    __typeof__(&mg_init_library) init_library;
    __typeof__(&mg_check_feature) check_feature;
    __typeof__(&mg_start) start;
    __typeof__(&mg_stop) stop;
    __typeof__(&mg_set_request_handler) set_request_handler;
    __typeof__(&mg_set_websocket_handler) set_websocket_handler;
    __typeof__(&mg_get_request_info) get_request_info;
    __typeof__(&mg_get_header) get_header;
    __typeof__(&mg_get_server_ports) get_server_ports;
    __typeof__(&mg_write) write;
    __typeof__(&mg_printf) printf;
    __typeof__(&mg_websocket_write) websocket_write;
    __typeof__(&mg_get_var) get_var;
    __typeof__(&mg_get_cookie) get_cookie;
    __typeof__(&mg_read) read;
} mg;

static pthread_once_t civetweb_once = PTHREAD_ONCE_INIT;

static void load(void) {
    void *library = dlopen("libcivetweb.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) return;
#define FIND(field, name) mg.field = (__typeof__(mg.field))dlsym(library, name)
    FIND(init_library, "mg_init_library");
    FIND(check_feature, "mg_check_feature");
    FIND(start, "mg_start");
    FIND(stop, "mg_stop");
    FIND(set_request_handler, "mg_set_request_handler");
    FIND(set_websocket_handler, "mg_set_websocket_handler");
    FIND(get_request_info, "mg_get_request_info");
    FIND(get_header, "mg_get_header");
    FIND(get_server_ports, "mg_get_server_ports");
    FIND(write, "mg_write");
    FIND(printf, "mg_printf");
    FIND(websocket_write, "mg_websocket_write");
    FIND(get_var, "mg_get_var");
    FIND(get_cookie, "mg_get_cookie");
    FIND(read, "mg_read");
#undef FIND
    if (!(mg.init_library && mg.check_feature && mg.start && mg.stop && mg.set_request_handler
          && mg.set_websocket_handler && mg.get_request_info && mg.get_header && mg.get_server_ports && mg.write
          && mg.printf && mg.websocket_write && mg.get_var && mg.get_cookie && mg.read)) return;
    if (!mg.check_feature(MG_FEATURES_WEBSOCKET)) return;
    mg.init_library(MG_FEATURES_WEBSOCKET);
    mg.loaded = 1;
}

int coffer_web_available(void) {
    pthread_once(&civetweb_once, load);
    return mg.loaded;
}

struct coffer_web_server {
    struct mg_context *context;
    coffer_front *front;
    coffer_web_handlers handlers;
    void *user;
};

/// Whether the request came through the front, which vouches with its secret: every request
/// does, unless a client found the inner port, or sent a head the front could not read (which
/// it passes on as it came, for CivetWeb to refuse).
static int vouched(const coffer_web_server *server, const struct mg_connection *connection) {
    const char *front = mg.get_header(connection, "X-Coffer-Front");
    return front != NULL && strcmp(front, coffer_front_secret(server->front)) == 0;
}

static void describe(const coffer_web_server *server, const struct mg_connection *connection,
                     coffer_web_request *request) {
    const struct mg_request_info *info = mg.get_request_info(connection);
    request->method = info->request_method != NULL ? info->request_method : "";
    request->remote_address = info->remote_addr;
    // What the front says (the client's address, a method CivetWeb cannot parse), believed only
    // under its secret; the front writes its headers first, and CivetWeb gives the first copy.
    if (vouched(server, connection)) {
        const char *peer = mg.get_header(connection, "X-Coffer-Peer");
        const char *method = mg.get_header(connection, "X-Coffer-Method");
        if (peer != NULL) request->remote_address = peer;
        if (method != NULL && strcmp(request->method, "PATCH") == 0) request->method = method;
    }
    // The path as sent (`decode_url` is off: Coffer decodes it, and checks `..` itself, name by
    // name); the query comes apart, not decoded.
    request->path = info->local_uri_raw != NULL ? info->local_uri_raw : (info->local_uri != NULL ? info->local_uri : "");
    request->query = info->query_string != NULL ? info->query_string : "";
    request->host = mg.get_header(connection, "Host");
    request->origin = mg.get_header(connection, "Origin");
    request->cookie = mg.get_header(connection, "Cookie");
    request->authorization = mg.get_header(connection, "Authorization");
    request->range = mg.get_header(connection, "Range");
    request->accept_language = mg.get_header(connection, "Accept-Language");
    request->content_type = mg.get_header(connection, "Content-Type");
    request->forwarded_for = mg.get_header(connection, "X-Forwarded-For");
    request->content_length = info->content_length;
}

static int on_request(struct mg_connection *connection, void *data) {
    coffer_web_server *server = data;
    if (!vouched(server, connection)) {
        // Not through the front: its address and method unknown, so it is not served.
        mg.printf(connection, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        return 400;
    }
    coffer_web_request request;
    describe(server, connection, &request);
    int status = server->handlers.request(server->user, connection, &request);
    return status > 0 ? status : 500;
}

static int on_ws_connect(const struct mg_connection *connection, void *data) {
    coffer_web_server *server = data;
    if (!vouched(server, connection)) {
        mg.printf((struct mg_connection *)connection, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        return 1;
    }
    coffer_web_request request;
    describe(server, connection, &request);
    int refused = server->handlers.ws_connect(server->user, (void *)connection, &request);
    // Refused before the handshake is answered: say so in HTTP, rather than only closing.
    if (refused) {
        mg.printf((struct mg_connection *)connection,
                  "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    }
    return refused;
}

static void on_ws_ready(struct mg_connection *connection, void *data) {
    coffer_web_server *server = data;
    server->handlers.ws_ready(server->user, connection);
}

static int on_ws_data(struct mg_connection *connection, int bits, char *bytes, size_t length, void *data) {
    coffer_web_server *server = data;
    return server->handlers.ws_data(server->user, connection, bits, bytes, length);
}

static void on_ws_close(const struct mg_connection *connection, void *data) {
    coffer_web_server *server = data;
    server->handlers.ws_closed(server->user, (void *)connection);
}

coffer_web_server *coffer_web_start(const char *address, int threads, coffer_web_handlers handlers, void *context,
                                    int *port, char *error, size_t capacity) {
    return coffer_web_start_tls(address, threads, handlers, context, NULL, NULL, port, error, capacity);
}

coffer_web_server *coffer_web_start_tls(const char *address, int threads, coffer_web_handlers handlers, void *context,
                                        const char *certificate, const char *key, int *port, char *error, size_t capacity) {
    error[0] = '\0';
    if (!coffer_web_available()) {
        snprintf(error, capacity, "CivetWeb (libcivetweb.so.1, with WebSocket support) could not be loaded");
        return NULL;
    }
    // TLS first: a certificate that cannot be used stops the server before anything listens.
    coffer_tls *tls = NULL;
    if (certificate != NULL && key != NULL) {
        tls = coffer_tls_load(certificate, key, error, capacity);
        if (tls == NULL) return NULL;
    }
    coffer_web_server *server = calloc(1, sizeof *server);
    if (server == NULL) {
        coffer_tls_free(tls);
        return NULL;
    }
    server->handlers = handlers;
    server->user = context;
    char thread_count[16];
    snprintf(thread_count, sizeof thread_count, "%d", threads);
    // No document root: CivetWeb serves nothing by itself, every answer comes from Coffer.
    const char *options[] = {
        // Only the front reaches CivetWeb: it listens on a loopback port the system chooses.
        "listening_ports", "127.0.0.1:0",
        "num_threads", thread_count,
        "enable_keep_alive", "yes",
        // An answer written in pieces (a chunk's size, its bytes, its end) goes out at once: with
        // Nagle's algorithm each small piece waited for the front's delayed ACK.
        "tcp_nodelay", "1",
        // Paths reach Coffer as sent: it decodes them once itself (WebDAV name by name).
        "decode_url", "no",
        // A request (or a client that sends half of one) holds a worker at most 5 s per read or write.
        "request_timeout_ms", "5000",
        "websocket_timeout_ms", "3600000",
        "enable_websocket_ping_pong", "yes",
        NULL,
    };
    struct mg_callbacks callbacks;
    memset(&callbacks, 0, sizeof callbacks);
    server->context = mg.start(&callbacks, server, options);
    if (server->context == NULL) {
        snprintf(error, capacity, "CivetWeb could not start on a loopback port");
        coffer_tls_free(tls);
        free(server);
        return NULL;
    }
    struct mg_server_port ports[4];
    memset(ports, 0, sizeof ports);
    int inner_port = mg.get_server_ports(server->context, 4, ports) > 0 ? ports[0].port : 0;
    if (inner_port == 0) coffer_tls_free(tls);
    server->front = inner_port > 0 ? coffer_front_start(address, inner_port, tls, port, error, capacity) : NULL;
    if (server->front == NULL) {
        if (error[0] == '\0') snprintf(error, capacity, "could not listen on %s", address);
        mg.stop(server->context);
        free(server);
        return NULL;
    }
    mg.set_websocket_handler(server->context, "/rpc", on_ws_connect, on_ws_ready, on_ws_data, on_ws_close, server);
    mg.set_request_handler(server->context, "/", on_request, server);
    return server;
}

void coffer_web_stop(coffer_web_server *server) {
    if (server == NULL) return;
    coffer_front_stop(server->front);
    mg.stop(server->context);
    // Freed only now: a handler CivetWeb was still running may have used it.
    coffer_front_free(server->front);
    free(server);
}

int coffer_web_respond(void *connection, int status, const char *lines, int64_t length) {
    const char *reason = status == 200 ? "OK" : status == 201 ? "Created" : status == 202 ? "Accepted" : status == 204 ? "No Content"
        : status == 206 ? "Partial Content" : status == 207 ? "Multi-Status" : status == 303 ? "See Other" : status == 304 ? "Not Modified"
        : status == 400 ? "Bad Request" : status == 401 ? "Unauthorized" : status == 403 ? "Forbidden" : status == 404 ? "Not Found"
        : status == 405 ? "Method Not Allowed" : status == 409 ? "Conflict" : status == 410 ? "Gone"
        : status == 412 ? "Precondition Failed" : status == 413 ? "Content Too Large" : status == 415 ? "Unsupported Media Type"
        : status == 416 ? "Range Not Satisfiable" : status == 421 ? "Misdirected Request" : status == 423 ? "Locked"
        : status == 424 ? "Failed Dependency" : status == 429 ? "Too Many Requests"
        : status == 500 ? "Internal Server Error" : status == 502 ? "Bad Gateway" : status == 503 ? "Service Unavailable"
        : status == 507 ? "Insufficient Storage" : "Error";
    char length_line[48] = "";
    if (length >= 0) snprintf(length_line, sizeof length_line, "Content-Length: %lld\r\n", (long long)length);
    return mg.printf(connection, "HTTP/1.1 %d %s\r\n%s%s\r\n", status, reason, lines, length_line);
}

int coffer_web_write(void *connection, const void *bytes, size_t length) {
    return mg.write(connection, bytes, length);
}

int64_t coffer_web_send_file(void *connection, int fd, int64_t offset, int64_t length) {
    const struct mg_request_info *info = mg.get_request_info(connection);
    coffer_web_server *server = info != NULL ? info->user_data : NULL;
    if (server == NULL || !vouched(server, connection)) return -2;
    const char *named = mg.get_header(connection, "X-Coffer-Link");
    char *after = NULL;
    unsigned long long number = named != NULL ? strtoull(named, &after, 10) : 0;
    if (named == NULL || after == named || *after != '\0') return -2;
    char marker[128];
    coffer_front_file_wait wait = { 0, 0 };
    int marker_length = coffer_front_offer_file(server->front, number, fd, offset, length, &wait, marker, sizeof marker);
    if (marker_length < 0) return -2;
    if (mg.write(connection, marker, (size_t)marker_length) != marker_length) {
        coffer_front_withdraw_file(server->front, number, &wait);
        return 0;
    }
    return coffer_front_await_file(server->front, number, &wait);
}

const char *coffer_web_header(void *connection, const char *name) {
    return mg.get_header(connection, name);
}

int coffer_web_read(void *connection, void *bytes, size_t length) {
    return mg.read(connection, bytes, length);
}

int coffer_web_ws_send(void *connection, int opcode, const void *bytes, size_t length) {
    return mg.websocket_write(connection, opcode, bytes, length);
}

int coffer_web_query_value(const char *query, const char *name, char *value, size_t capacity) {
    if (query == NULL) return -1;
    return mg.get_var(query, strlen(query), name, value, capacity);
}

int coffer_web_cookie_value(const char *cookie, const char *name, char *value, size_t capacity) {
    if (cookie == NULL) return -1;
    return mg.get_cookie(cookie, name, value, capacity);
}
