// TLS for the front (CCivetWebFront.c): the system's OpenSSL (libssl 3), opened with dlopen when a
// server is first asked for TLS, so nothing here is linked against it. Each TLS connection gets
// one thread that carries bytes between the encrypted socket and a plain socket pair whose
// other end the front treats as the client: the front's request rewriting, and CivetWeb behind
// it, see the same plain HTTP as without TLS. One thread per connection, because an OpenSSL
// connection must not be read and written from two threads at once.
#define _GNU_SOURCE
#include "CCivetWebTLS.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum {
    ssl_error_want_read = 2,
    ssl_error_want_write = 3,
    ssl_filetype_pem = 1,
    ssl_ctrl_mode = 33,
    ssl_ctrl_set_min_proto_version = 123,
    ssl_mode_partial_write = 1,
    ssl_mode_moving_buffer = 2,
    ssl_op_ignore_unexpected_eof = 1 << 7,
    tls1_2_version = 0x0303,
    pump_capacity = 64 * 1024,
    handshake_seconds = 15,
    // A connection where neither side moves for this long is ended (CivetWeb's own timeouts
    // govern a slow request; this frees a client that stopped reading).
    stalled_seconds = 120,
};

static struct {
    int loaded;
    const void *(*server_method)(void);
    void *(*context_new)(const void *method);
    void (*context_free)(void *context);
    int (*use_chain)(void *context, const char *file);
    int (*use_key)(void *context, const char *file, int type);
    int (*check_key)(const void *context);
    long (*context_ctrl)(void *context, int command, long larg, void *parg);
    void *(*connection_new)(void *context);
    void (*connection_free)(void *connection);
    int (*set_fd)(void *connection, int fd);
    int (*accept)(void *connection);
    int (*read)(void *connection, void *buffer, int count);
    int (*write)(void *connection, const void *buffer, int count);
    int (*get_error)(const void *connection, int result);
    int (*shutdown)(void *connection);
    unsigned long (*error_get)(void);
    uint64_t (*set_options)(void *context, uint64_t options);   // (optional)
    void (*error_string)(unsigned long error, char *buffer, size_t length);
} ssl;

static pthread_once_t ssl_once = PTHREAD_ONCE_INIT;

static void load_ssl(void) {
    const char *names[] = { "libssl.so.3", "libssl.so" };
    void *library = NULL;
    for (size_t index = 0; index < sizeof names / sizeof names[0] && library == NULL; index++) {
        library = dlopen(names[index], RTLD_NOW | RTLD_LOCAL);
    }
    if (library == NULL) return;
#define FIND(field, symbol) ssl.field = (__typeof__(ssl.field))dlsym(library, symbol)
    FIND(server_method, "TLS_server_method");
    FIND(context_new, "SSL_CTX_new");
    FIND(context_free, "SSL_CTX_free");
    FIND(use_chain, "SSL_CTX_use_certificate_chain_file");
    FIND(use_key, "SSL_CTX_use_PrivateKey_file");
    FIND(check_key, "SSL_CTX_check_private_key");
    FIND(context_ctrl, "SSL_CTX_ctrl");
    FIND(connection_new, "SSL_new");
    FIND(connection_free, "SSL_free");
    FIND(set_fd, "SSL_set_fd");
    FIND(accept, "SSL_accept");
    FIND(read, "SSL_read");
    FIND(write, "SSL_write");
    FIND(get_error, "SSL_get_error");
    FIND(shutdown, "SSL_shutdown");
    FIND(error_get, "ERR_get_error");
    FIND(error_string, "ERR_error_string_n");
    FIND(set_options, "SSL_CTX_set_options");
#undef FIND
    ssl.loaded = ssl.server_method && ssl.context_new && ssl.context_free && ssl.use_chain && ssl.use_key && ssl.check_key
        && ssl.context_ctrl && ssl.connection_new && ssl.connection_free && ssl.set_fd && ssl.accept && ssl.read
        && ssl.write && ssl.get_error && ssl.shutdown && ssl.error_get && ssl.error_string;
}

// OpenSSL's last reason, after `what`.
static void say_error(char *error, size_t capacity, const char *what) {
    char reason[256] = "";
    unsigned long code = ssl.error_get != NULL ? ssl.error_get() : 0;
    if (code != 0) ssl.error_string(code, reason, sizeof reason);
    snprintf(error, capacity, "%s%s%s", what, reason[0] ? ": " : "", reason);
}

struct coffer_tls {
    void *context;
};

coffer_tls *coffer_tls_load(const char *certificate, const char *key, char *error, size_t capacity) {
    pthread_once(&ssl_once, load_ssl);
    if (!ssl.loaded) {
        snprintf(error, capacity, "TLS needs OpenSSL's libssl.so.3 (Debian: apt-get install libssl3)");
        return NULL;
    }
    void *context = ssl.context_new(ssl.server_method());
    if (context == NULL) {
        say_error(error, capacity, "OpenSSL could not make a TLS context");
        return NULL;
    }
    ssl.context_ctrl(context, ssl_ctrl_set_min_proto_version, tls1_2_version, NULL);
    ssl.context_ctrl(context, ssl_ctrl_mode, ssl_mode_partial_write | ssl_mode_moving_buffer, NULL);
    // A client that closes its side without TLS's close_notify (many do, after their last
    // request) still gets its answers: the end of its bytes is an end, not an attack.
    if (ssl.set_options != NULL) ssl.set_options(context, ssl_op_ignore_unexpected_eof);
    if (ssl.use_chain(context, certificate) != 1) {
        char what[600];
        snprintf(what, sizeof what, "the certificate %s cannot be read (a PEM file is expected)", certificate);
        say_error(error, capacity, what);
        ssl.context_free(context);
        return NULL;
    }
    if (ssl.use_key(context, key, ssl_filetype_pem) != 1) {
        char reason[256] = "";
        unsigned long code = ssl.error_get();
        if (code != 0) ssl.error_string(code, reason, sizeof reason);
        // OpenSSL compares the key with the certificate as it loads it.
        if (strstr(reason, "mismatch") != NULL) {
            snprintf(error, capacity, "the key %s is not the certificate's: %s", key, reason);
        } else {
            snprintf(error, capacity, "the key %s cannot be read (an unencrypted PEM file is expected)%s%s", key,
                     reason[0] ? ": " : "", reason);
        }
        ssl.context_free(context);
        return NULL;
    }
    if (ssl.check_key(context) != 1) {
        char what[600];
        snprintf(what, sizeof what, "the key %s is not the certificate's", key);
        say_error(error, capacity, what);
        ssl.context_free(context);
        return NULL;
    }
    coffer_tls *tls = calloc(1, sizeof *tls);
    if (tls == NULL) {
        ssl.context_free(context);
        snprintf(error, capacity, "out of memory");
        return NULL;
    }
    tls->context = context;
    return tls;
}

void coffer_tls_free(coffer_tls *tls) {
    if (tls == NULL) return;
    ssl.context_free(tls->context);
    free(tls);
}

static long long now_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec;
}

// What the pump waits for on each side, from an OpenSSL result.
static int tls_wants(void *connection, int result, short *events) {
    int reason = ssl.get_error(connection, result);
    if (reason == ssl_error_want_read) { *events |= POLLIN; return 1; }
    if (reason == ssl_error_want_write) { *events |= POLLOUT; return 1; }
    return 0;
}

int coffer_tls_pump(coffer_tls *tls, int encrypted, int plain, const int *stopping) {
    void *connection = ssl.connection_new(tls->context);
    if (connection == NULL || ssl.set_fd(connection, encrypted) != 1) {
        if (connection != NULL) ssl.connection_free(connection);
        return -1;
    }
    fcntl(encrypted, F_SETFL, fcntl(encrypted, F_GETFL) | O_NONBLOCK);
    fcntl(plain, F_SETFL, fcntl(plain, F_GETFL) | O_NONBLOCK);
    int outcome = -1;
    long long deadline = now_seconds() + handshake_seconds;
    // A client speaking plain HTTP to the TLS port (its first byte is not a TLS record's) is told so in plain HTTP.
    for (;;) {
        struct pollfd wait = { .fd = encrypted, .events = POLLIN };
        int ready = poll(&wait, 1, 250);
        if (ready > 0) break;
        if ((ready < 0 && errno != EINTR) || __atomic_load_n(stopping, __ATOMIC_RELAXED) || now_seconds() >= deadline) goto done;
    }
    unsigned char first = 0;
    if (recv(encrypted, &first, 1, MSG_PEEK) != 1) goto done;
    if (first != 0x16) {
        static const char answer[] = "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n"
            "Connection: close\r\nContent-Length: 53\r\n\r\nThis port speaks HTTPS: use https:// in the address.\n";
        send(encrypted, answer, sizeof answer - 1, MSG_NOSIGNAL);
        shutdown(encrypted, SHUT_WR);
        // What the client still sends is read away (closing with it unread would reset the
        // connection, and the answer with it) until it closes, for two seconds at most.
        char discard[4096];
        long long drained = now_seconds() + 2;
        while (now_seconds() < drained && !__atomic_load_n(stopping, __ATOMIC_RELAXED)) {
            struct pollfd wait = { .fd = encrypted, .events = POLLIN };
            if (poll(&wait, 1, 250) < 0 && errno != EINTR) break;
            ssize_t count = recv(encrypted, discard, sizeof discard, MSG_DONTWAIT);
            if (count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) break;
        }
        goto done;
    }
    // The handshake, within its time.
    for (;;) {
        int result = ssl.accept(connection);
        if (result == 1) break;
        short events = 0;
        if (!tls_wants(connection, result, &events) || __atomic_load_n(stopping, __ATOMIC_RELAXED) || now_seconds() >= deadline) goto done;
        struct pollfd wait = { .fd = encrypted, .events = events };
        poll(&wait, 1, 250);
    }
    char *inward = malloc(pump_capacity), *outward = malloc(pump_capacity);
    if (inward == NULL || outward == NULL) {
        free(inward);
        free(outward);
        goto done;
    }
    // inward: decrypted from the client, for the plain side; outward: from the plain side, to encrypt.
    size_t in_start = 0, in_end = 0, out_start = 0, out_end = 0;
    int client_ended = 0, plain_ended = 0, failed = 0;
    long long last_moved = now_seconds();
    while (!failed && !__atomic_load_n(stopping, __ATOMIC_RELAXED)) {
        short encrypted_events = 0, plain_events = 0;
        int moved = 0;
        // Client → plain side.
        if (!client_ended && in_end == 0) {
            int count = ssl.read(connection, inward, pump_capacity);
            if (count > 0) {
                in_start = 0;
                in_end = (size_t)count;
                moved = 1;
            } else if (!tls_wants(connection, count, &encrypted_events)) {
                // The client closed (or broke) its side: CivetWeb sees the end of the requests.
                client_ended = 1;
                shutdown(plain, SHUT_WR);
            }
        }
        if (in_end > in_start) {
            ssize_t sent = send(plain, inward + in_start, in_end - in_start, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (sent > 0) {
                in_start += (size_t)sent;
                moved = 1;
                if (in_start == in_end) in_start = in_end = 0;
            } else if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
                plain_events |= POLLOUT;
            } else {
                failed = 1;
            }
        }
        // Plain side → client.
        if (!plain_ended && out_end == 0) {
            ssize_t count = recv(plain, outward, pump_capacity, MSG_DONTWAIT);
            if (count > 0) {
                out_start = 0;
                out_end = (size_t)count;
                moved = 1;
            } else if (count == 0) {
                plain_ended = 1;
            } else if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
                plain_events |= POLLIN;
            } else {
                plain_ended = 1;
            }
        }
        if (out_end > out_start) {
            int count = ssl.write(connection, outward + out_start, (int)(out_end - out_start));
            if (count > 0) {
                out_start += (size_t)count;
                moved = 1;
                if (out_start == out_end) out_start = out_end = 0;
            } else if (!tls_wants(connection, count, &encrypted_events)) {
                failed = 1;
            }
        }
        // Done when the answers have all gone out and CivetWeb has closed its side.
        if (plain_ended && out_end == 0) {
            outcome = 0;
            break;
        }
        // Stalled: bytes wait to go one way and nothing has moved for a long while (the other
        // side stopped reading). Waiting with nothing to carry (a slow answer being prepared,
        // an idle connection) is not a stall: CivetWeb's own timeouts govern that.
        int pending = in_end > in_start || out_end > out_start;
        if (moved || !pending) last_moved = now_seconds();
        if (moved) continue;
        if (now_seconds() - last_moved > stalled_seconds) break;
        // A side with nothing to wait for is left out (a closed one would wake poll at once, for ever).
        struct pollfd waits[2] = { { .fd = encrypted_events ? encrypted : -1, .events = encrypted_events },
                                   { .fd = plain_events ? plain : -1, .events = plain_events } };
        // (A side that hung up is read next time round, and gives its end.)
        if (poll(waits, 2, 250) < 0 && errno != EINTR) break;
    }
    free(inward);
    free(outward);
    if (outcome == 0) ssl.shutdown(connection);  // the close_notify, best effort
done:
    ssl.connection_free(connection);
    return outcome;
}
