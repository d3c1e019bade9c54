// The front on the listening socket: CivetWeb 1.15's request parser refuses the methods it does
// not list, WebDAV's COPY and MOVE among them, with its own 400 before any callback. The front
// accepts every connection itself, carries it to CivetWeb on a loopback port of its own, and
// rewrites each request's head on the way: COPY and MOVE travel as PATCH with the method in a
// header, and every request carries the client's address, under a secret CivetWeb's callbacks
// check (a local program reaching the inner port directly cannot claim either). Answers flow back
// untouched. CivetWeb stays the server: its parser, limits, timeouts and thread pool judge every
// request as before.
#define _GNU_SOURCE
#include "CCivetWebFrontLink.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

// One TLS connection: its encrypted socket, and the plain end of the pair the link reads.
typedef struct {
    coffer_front *front;
    int encrypted;
    int plain;
} front_pump;

// Buffered reading of the client's side.
typedef struct {
    int fd;
    char *bytes;
    size_t start;
    size_t end;
} front_reader;

int coffer_front_send_all(int fd, const char *bytes, size_t length) {
    while (length > 0) {
        ssize_t sent = send(fd, bytes, length, MSG_NOSIGNAL);
        if (sent < 0 && errno == EINTR) continue;
        if (sent <= 0) return -1;
        bytes += sent;
        length -= (size_t)sent;
    }
    return 0;
}

// Reads more into the buffer (moving what is unread to its start): the count, 0 at the end, -1.
static ssize_t fill(front_reader *reader) {
    if (reader->start > 0) {
        memmove(reader->bytes, reader->bytes + reader->start, reader->end - reader->start);
        reader->end -= reader->start;
        reader->start = 0;
    }
    if (reader->end == head_capacity) return -1;
    for (;;) {
        ssize_t count = recv(reader->fd, reader->bytes + reader->end, head_capacity - reader->end, 0);
        if (count < 0 && errno == EINTR) continue;
        if (count > 0) reader->end += (size_t)count;
        return count;
    }
}

// Moves up to `*length` bytes from `client` to `server` through a pipe (splice), so a long body's
// bytes never pass through the front's memory; `*length` says what is left. 0 when done, 1 when
// the kernel cannot splice these sockets (before anything moved: the caller reads and sends the
// rest), -1 when either side is gone. `spare` (`capacity` bytes) carries what a pipe holds
// when the server's side refuses to be spliced into.
static int carry_spliced(int client, int server, uint64_t *length, char *spare, size_t capacity) {
    int pipe_ends[2];
    if (pipe2(pipe_ends, O_CLOEXEC) < 0) return 1;
    int size = fcntl(pipe_ends[1], F_SETPIPE_SZ, splice_capacity);
    size_t piece = size > 0 ? (size_t)size : 64 * 1024;
    int result = 0;
    int moved_any = 0;
    while (*length > 0) {
        ssize_t taken = splice(client, NULL, pipe_ends[1], NULL, *length < piece ? (size_t)*length : piece,
                               SPLICE_F_MOVE | SPLICE_F_MORE);
        if (taken < 0 && errno == EINTR) continue;
        if (taken < 0 && !moved_any && (errno == EINVAL || errno == ENOSYS)) { result = 1; break; }
        if (taken <= 0) { result = -1; break; }
        moved_any = 1;
        *length -= (uint64_t)taken;
        size_t left = (size_t)taken;
        // (No MSG_MORE on the body's last piece: the kernel would hold it back a moment.)
        unsigned int more = *length > 0 ? SPLICE_F_MORE : 0;
        while (left > 0) {
            ssize_t given = splice(pipe_ends[0], NULL, server, NULL, left, SPLICE_F_MOVE | more);
            if (given < 0 && errno == EINTR) continue;
            if (given < 0 && (errno == EINVAL || errno == ENOSYS)) {
                ssize_t count = read(pipe_ends[0], spare, left < capacity ? left : capacity);
                if (count < 0 && errno == EINTR) continue;
                if (count <= 0 || coffer_front_send_all(server, spare, (size_t)count) < 0) { result = -1; break; }
                given = count;
            }
            if (given <= 0) { result = -1; break; }
            left -= (size_t)given;
        }
        if (result != 0) break;
    }
    close(pipe_ends[0]);
    close(pipe_ends[1]);
    return result;
}

// Carries `length` bytes from the client to the server: what the reader holds, then a long rest
// spliced, and what cannot be spliced read and sent.
static int carry(front_reader *reader, int server, uint64_t length) {
    int may_splice = 1;
    while (length > 0) {
        if (may_splice && reader->start == reader->end && length >= splice_threshold) {
            reader->start = reader->end = 0;
            int spliced = carry_spliced(reader->fd, server, &length, reader->bytes, head_capacity);
            if (spliced < 0) return -1;
            if (spliced == 1) may_splice = 0;
            if (length == 0) return 0;
        }
        if (reader->start == reader->end) {
            reader->start = reader->end = 0;
            if (fill(reader) <= 0) return -1;
        }
        size_t available = reader->end - reader->start;
        size_t part = available < length ? available : (size_t)length;
        if (coffer_front_send_all(server, reader->bytes + reader->start, part) < 0) return -1;
        reader->start += part;
        length -= part;
    }
    return 0;
}

// The end of the line starting at the reader's position (after its "\r\n"), reading more as
// needed; 0 when the line is too long or the client is gone.
static size_t line_end(front_reader *reader, size_t limit) {
    size_t scanned = 0;
    for (;;) {
        char *from = reader->bytes + reader->start;
        size_t available = reader->end - reader->start;
        for (size_t index = scanned > 0 ? scanned - 1 : 0; index + 1 < available; index++) {
            if (from[index] == '\r' && from[index + 1] == '\n') return index + 2;
        }
        scanned = available;
        if (available >= limit || fill(reader) <= 0) return 0;
    }
}

// Carries a chunked body (chunks, the last one, trailers) as it is.
static int carry_chunked(front_reader *reader, int server) {
    for (;;) {
        size_t length = line_end(reader, line_capacity);
        if (length == 0) return -1;
        char *line = reader->bytes + reader->start;
        char *after = NULL;
        errno = 0;
        unsigned long long size = strtoull(line, &after, 16);
        if (after == line || errno != 0) return -1;
        if (carry(reader, server, length) < 0) return -1;
        if (size == 0) break;
        if (carry(reader, server, size + 2) < 0) return -1;
    }
    for (;;) {   // trailers, up to the empty line
        size_t length = line_end(reader, line_capacity);
        if (length == 0) return -1;
        if (carry(reader, server, length) < 0) return -1;
        if (length == 2) return 0;
    }
}

// Whether the header line `line` (`length` bytes, without its "\r\n") is `name`; then its value.
static const char *header_value(const char *line, size_t length, const char *name, size_t *value_length) {
    size_t name_length = strlen(name);
    if (length <= name_length || line[name_length] != ':' || strncasecmp(line, name, name_length) != 0) return NULL;
    const char *value = line + name_length + 1;
    const char *end = line + length;
    while (value < end && (*value == ' ' || *value == '\t')) value++;
    while (end > value && (end[-1] == ' ' || end[-1] == '\t')) end--;
    *value_length = (size_t)(end - value);
    return value;
}

typedef enum { framed_none, framed_length, framed_chunked, framed_raw } body_kind;

// Rewrites the head at the reader's position (`length` bytes, ending "\r\n\r\n") into `out`;
// says how its body is framed. -1 when the head cannot be read: it is then sent as it came.
static ssize_t rewrite_head(front_link *link, const char *head, size_t length, char *out, size_t capacity,
                            body_kind *kind, uint64_t *body_length) {
    const char *line_end_at = memchr(head, '\n', length);
    const char *space = memchr(head, ' ', length);
    if (line_end_at == NULL || space == NULL || space > line_end_at) return -1;
    size_t method_length = (size_t)(space - head);
    int renamed = (method_length == 4 && (memcmp(head, "COPY", 4) == 0 || memcmp(head, "MOVE", 4) == 0));
    size_t used = 0;
#define APPEND(bytes, count) do { if (used + (count) > capacity) return -1; memcpy(out + used, (bytes), (count)); used += (count); } while (0)
    if (renamed) {
        APPEND("PATCH", 5);
        APPEND(space, (size_t)(line_end_at + 1 - space));
    } else {
        APPEND(head, (size_t)(line_end_at + 1 - head));
    }
    // The front's own headers first: CivetWeb answers a header's first copy.
    char added[320];
    int added_length = snprintf(added, sizeof added, "X-Coffer-Front: %s\r\nX-Coffer-Peer: %s\r\nX-Coffer-Link: %llu\r\n%s%.*s%s",
                                link->front->secret, link->peer, (unsigned long long)link->number, renamed ? "X-Coffer-Method: " : "",
                                renamed ? 4 : 0, head, renamed ? "\r\n" : "");
    if (added_length < 0 || (size_t)added_length >= sizeof added) return -1;
    APPEND(added, (size_t)added_length);
    *kind = framed_none;
    *body_length = 0;
    int has_length = 0, chunked = 0, upgrade = 0;
    const char *line = line_end_at + 1;
    const char *end = head + length - 2;   // the empty line
    while (line < end) {
        const char *next = memchr(line, '\n', (size_t)(end - line));
        if (next == NULL) return -1;
        size_t line_length = (size_t)(next - line);
        if (line_length > 0 && line[line_length - 1] == '\r') line_length--;
        // A folded line, or a name with space before its colon, is read differently by each
        // parser: such a head is not the front's to pass on (CivetWeb refuses it unvouched).
        const char *colon = memchr(line, ':', line_length);
        if (line_length == 0 || line[0] == ' ' || line[0] == '\t' || colon == NULL
            || colon[-1] == ' ' || colon[-1] == '\t') return -1;
        size_t value_length = 0;
        const char *value;
        if ((value = header_value(line, line_length, "Content-Length", &value_length)) != NULL) {
            char digits[24];
            if (value_length == 0 || value_length >= sizeof digits) return -1;
            memcpy(digits, value, value_length);
            digits[value_length] = '\0';
            char *after = NULL;
            errno = 0;
            unsigned long long parsed = strtoull(digits, &after, 10);
            if (*after != '\0' || errno != 0 || (has_length && parsed != *body_length)) return -1;
            *body_length = parsed;
            has_length = 1;
        } else if ((value = header_value(line, line_length, "Transfer-Encoding", &value_length)) != NULL) {
            // Only `chunked` alone is framed here; any other coding CivetWeb refuses.
            if (value_length != 7 || strncasecmp(value, "chunked", 7) != 0) return -1;
            chunked = 1;
        } else if (header_value(line, line_length, "Upgrade", &value_length) != NULL) {
            upgrade = 1;
        }
        // A client's own headers in the front's name are dropped.
        if (!(colon - line >= 9 && strncasecmp(line, "X-Coffer-", 9) == 0)) APPEND(line, (size_t)(next + 1 - line));
        line = next + 1;
    }
    if (has_length && chunked) return -1;
    APPEND("\r\n", 2);
#undef APPEND
    *kind = upgrade ? framed_raw : chunked ? framed_chunked : has_length ? framed_length : framed_none;
    return (ssize_t)used;
}

static void link_ended(front_link *link) {
    coffer_front *front = link->front;
    pthread_mutex_lock(&front->lock);
    link->ended += 1;
    int last = link->ended == 2;
    if (last) {
        if (link->previous != NULL) link->previous->next = link->next; else front->links = link->next;
        if (link->next != NULL) link->next->previous = link->previous;
        front->live -= 1;
        pthread_cond_broadcast(&front->changed);
    }
    pthread_mutex_unlock(&front->lock);
    if (last) {
        if (link->file.fd >= 0) close(link->file.fd);
        close(link->client);
        close(link->server);
        free(link);
    }
}

static void carry_raw(int from, int to, char *buffer, size_t capacity) {
    for (;;) {
        ssize_t count = recv(from, buffer, capacity, 0);
        if (count < 0 && errno == EINTR) continue;
        if (count <= 0 || coffer_front_send_all(to, buffer, (size_t)count) < 0) return;
    }
}

// Client to CivetWeb, request by request.
static void *carry_requests(void *argument) {
    front_link *link = argument;
    char *buffer = malloc(head_capacity);
    char *rewritten = malloc(head_capacity + 512);
    front_reader reader = { .fd = link->client, .bytes = buffer };
    if (buffer != NULL && rewritten != NULL) {
        for (;;) {
            // The head, up to its empty line.
            size_t length = 0;
            for (;;) {
                char *from = reader.bytes + reader.start;
                size_t available = reader.end - reader.start;
                char *found = available >= 4 ? memmem(from, available, "\r\n\r\n", 4) : NULL;
                if (found != NULL) { length = (size_t)(found + 4 - from); break; }
                if (fill(&reader) <= 0) break;
            }
            if (length == 0) {
                // No whole head (the client ended, or sent more than any head): CivetWeb gets what
                // came as it is, and judges it.
                if (reader.end > reader.start) {
                    if (coffer_front_send_all(link->server, reader.bytes + reader.start, reader.end - reader.start) < 0) break;
                    reader.start = reader.end = 0;
                    carry_raw(link->client, link->server, buffer, head_capacity);
                }
                break;
            }
            body_kind kind = framed_none;
            uint64_t body_length = 0;
            ssize_t out = rewrite_head(link, reader.bytes + reader.start, length, rewritten, head_capacity + 512,
                                       &kind, &body_length);
            if (out < 0) {
                // Not a request the front can frame: CivetWeb refuses it, and the connection ends.
                coffer_front_send_all(link->server, reader.bytes + reader.start, reader.end - reader.start);
                break;
            }
            reader.start += length;
            if (coffer_front_send_all(link->server, rewritten, (size_t)out) < 0) break;
            if (kind == framed_length && carry(&reader, link->server, body_length) < 0) break;
            if (kind == framed_chunked && carry_chunked(&reader, link->server) < 0) break;
            if (kind == framed_raw) {
                if (reader.end > reader.start && coffer_front_send_all(link->server, reader.bytes + reader.start, reader.end - reader.start) < 0) break;
                carry_raw(link->client, link->server, buffer, head_capacity);
                break;
            }
        }
    }
    free(buffer);
    free(rewritten);
    // CivetWeb sees the client's end; the answer still flows back.
    shutdown(link->server, SHUT_WR);
    link_ended(link);
    return NULL;
}

// CivetWeb to the client, as it comes (and a file a handler offers, CCivetWebFrontFiles.c).
static void *carry_answers(void *argument) {
    front_link *link = argument;
    char *buffer = malloc(copy_capacity);
    if (buffer != NULL) coffer_front_carry_answers(link, buffer, copy_capacity);
    free(buffer);
    // Either side gone: both end, which wakes the other thread.
    shutdown(link->client, SHUT_RDWR);
    shutdown(link->server, SHUT_RDWR);
    link_ended(link);
    return NULL;
}

static int connect_inner(int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    struct sockaddr_in inner;
    memset(&inner, 0, sizeof inner);
    inner.sin_family = AF_INET;
    inner.sin_port = htons((uint16_t)port);
    inner.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&inner, sizeof inner) < 0) {
        close(fd);
        return -1;
    }
    int on = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    return fd;
}

static int start_thread(void *(*body)(void *), void *argument) {
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attributes, 256 * 1024);
    pthread_t thread;
    int failed = pthread_create(&thread, &attributes, body, argument);
    pthread_attr_destroy(&attributes);
    return failed;
}

// TLS on one connection, until either side ends (CCivetWebTLS.c).
static void *carry_tls(void *argument) {
    front_pump *pump = argument;
    coffer_front *front = pump->front;
    coffer_tls_pump(front->tls, pump->encrypted, pump->plain, &front->stopping);
    close(pump->encrypted);
    close(pump->plain);
    free(pump);
    pthread_mutex_lock(&front->lock);
    front->pumps -= 1;
    pthread_cond_broadcast(&front->changed);
    pthread_mutex_unlock(&front->lock);
    return NULL;
}

static int start_thread(void *(*body)(void *), void *argument);

// With TLS, the link's client is the plain end of a socket pair, and a thread of its own
// carries the other end to and from the encrypted socket: -1 when that cannot start.
static int wrap_in_tls(coffer_front *front, int *client) {
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0) return -1;
    front_pump *pump = calloc(1, sizeof *pump);
    if (pump == NULL) {
        close(pair[0]);
        close(pair[1]);
        return -1;
    }
    pump->front = front;
    pump->encrypted = *client;
    pump->plain = pair[1];
    pthread_mutex_lock(&front->lock);
    front->pumps += 1;
    pthread_mutex_unlock(&front->lock);
    if (start_thread(carry_tls, pump) != 0) {
        pthread_mutex_lock(&front->lock);
        front->pumps -= 1;
        pthread_mutex_unlock(&front->lock);
        free(pump);
        close(pair[0]);
        close(pair[1]);
        return -1;
    }
    *client = pair[0];
    return 0;
}

static void *accept_clients(void *argument) {
    coffer_front *front = argument;
    for (;;) {
        pthread_mutex_lock(&front->lock);
        while (front->live >= connection_limit && !front->stopping) pthread_cond_wait(&front->changed, &front->lock);
        int stopping = front->stopping;
        pthread_mutex_unlock(&front->lock);
        if (stopping) return NULL;
        struct pollfd waits[2] = { { .fd = front->listener, .events = POLLIN }, { .fd = front->wake[0], .events = POLLIN } };
        if (poll(waits, 2, -1) < 0) {
            if (errno == EINTR) continue;
            return NULL;
        }
        if (waits[1].revents != 0) return NULL;
        struct sockaddr_storage address;
        socklen_t address_length = sizeof address;
        int client = accept4(front->listener, (struct sockaddr *)&address, &address_length, SOCK_CLOEXEC);
        if (client < 0) {
            // Out of descriptors or memory: the waiting client stays queued; try again in a while
            // rather than spinning on a listener that stays readable.
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                struct timespec pause = { 0, 100 * 1000 * 1000 };
                nanosleep(&pause, NULL);
            }
            continue;
        }
        int server = connect_inner(front->inner_port);
        front_link *link = server >= 0 ? calloc(1, sizeof *link) : NULL;
        if (link == NULL) {
            if (server >= 0) close(server);
            close(client);
            continue;
        }
        int on = 1;
        setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
        if (front->tls != NULL && wrap_in_tls(front, &client) < 0) {
            close(server);
            close(client);
            free(link);
            continue;
        }
        link->front = front;
        link->client = client;
        link->server = server;
        link->file.fd = -1;
        if (getnameinfo((struct sockaddr *)&address, address_length, link->peer, sizeof link->peer, NULL, 0, NI_NUMERICHOST) != 0) {
            snprintf(link->peer, sizeof link->peer, "?");
        }
        pthread_mutex_lock(&front->lock);
        link->number = ++front->next_link;
        link->next = front->links;
        if (front->links != NULL) front->links->previous = link;
        front->links = link;
        front->live += 1;
        pthread_mutex_unlock(&front->lock);
        if (start_thread(carry_requests, link) != 0) {
            shutdown(server, SHUT_RDWR);
            link_ended(link);
            link_ended(link);
            continue;
        }
        if (start_thread(carry_answers, link) != 0) {
            shutdown(client, SHUT_RDWR);
            shutdown(server, SHUT_RDWR);
            link_ended(link);
        }
    }
}

// "host:port" or "[v6]:port" into a bound, listening socket.
static int listen_on(const char *address, int *port, char *error, size_t capacity) {
    char host[256];
    const char *colon = strrchr(address, ':');
    if (colon == NULL) {
        snprintf(error, capacity, "%s is not an address with a port", address);
        return -1;
    }
    size_t host_length = (size_t)(colon - address);
    const char *host_start = address;
    if (host_length >= 2 && address[0] == '[' && address[host_length - 1] == ']') {
        host_start += 1;
        host_length -= 2;
    }
    if (host_length >= sizeof host) {
        snprintf(error, capacity, "%s is too long an address", address);
        return -1;
    }
    memcpy(host, host_start, host_length);
    host[host_length] = '\0';
    struct addrinfo hints, *found = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
    if (getaddrinfo(host, colon + 1, &hints, &found) != 0 || found == NULL) {
        snprintf(error, capacity, "%s is not a numeric address and port", address);
        return -1;
    }
    int fd = socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int on = 1;
    if (fd >= 0) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (fd < 0 || bind(fd, found->ai_addr, found->ai_addrlen) < 0 || listen(fd, 128) < 0) {
        snprintf(error, capacity, "could not listen on %s (%s)", address, strerror(errno));
        if (fd >= 0) close(fd);
        freeaddrinfo(found);
        return -1;
    }
    freeaddrinfo(found);
    struct sockaddr_storage bound;
    socklen_t bound_length = sizeof bound;
    getsockname(fd, (struct sockaddr *)&bound, &bound_length);
    *port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
                                               : ((struct sockaddr_in *)&bound)->sin_port);
    return fd;
}

coffer_front *coffer_front_start(const char *address, int inner_port, coffer_tls *tls, int *port, char *error, size_t capacity) {
    coffer_front *front = calloc(1, sizeof *front);
    if (front == NULL) {
        coffer_tls_free(tls);
        return NULL;
    }
    front->tls = tls;
    unsigned char random[32];
    if (getrandom(random, sizeof random, 0) != sizeof random) {
        snprintf(error, capacity, "no randomness for the front's secret");
        coffer_tls_free(tls);
        free(front);
        return NULL;
    }
    for (int index = 0; index < 16; index++) {
        snprintf(front->secret + 2 * index, 3, "%02x", random[index]);
        snprintf(front->file_secret + 2 * index, 3, "%02x", random[16 + index]);
    }
    front->inner_port = inner_port;
    front->listener = listen_on(address, port, error, capacity);
    if (front->listener < 0) {
        coffer_tls_free(tls);
        free(front);
        return NULL;
    }
    if (pipe2(front->wake, O_CLOEXEC) < 0) {
        snprintf(error, capacity, "no pipe for the front (%s)", strerror(errno));
        close(front->listener);
        coffer_tls_free(tls);
        free(front);
        return NULL;
    }
    pthread_mutex_init(&front->lock, NULL);
    pthread_cond_init(&front->changed, NULL);
    // The front's threads take no signal meant for the process.
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    int failed = pthread_create(&front->acceptor, NULL, accept_clients, front);
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    if (failed != 0) {
        snprintf(error, capacity, "no thread for the front");
        close(front->listener);
        close(front->wake[0]);
        close(front->wake[1]);
        coffer_tls_free(tls);
        free(front);
        return NULL;
    }
    return front;
}

const char *coffer_front_secret(const coffer_front *front) {
    return front->secret;
}

void coffer_front_stop(coffer_front *front) {
    if (front == NULL) return;
    pthread_mutex_lock(&front->lock);
    __atomic_store_n(&front->stopping, 1, __ATOMIC_RELAXED);
    pthread_cond_broadcast(&front->changed);
    pthread_mutex_unlock(&front->lock);
    ssize_t ignored = write(front->wake[1], "x", 1);
    (void)ignored;
    pthread_join(front->acceptor, NULL);
    close(front->listener);
    // Every connection ends; its threads free it. Waits 10 s at most.
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 10;
    pthread_mutex_lock(&front->lock);
    for (front_link *link = front->links; link != NULL; link = link->next) {
        shutdown(link->client, SHUT_RDWR);
        shutdown(link->server, SHUT_RDWR);
    }
    // (TLS threads see `stopping` within a quarter of a second.)
    // (A handler waiting for its file to be sent sees its link gone, and leaves.)
    while (front->live > 0 || front->pumps > 0 || front->waiters > 0) {
        if (pthread_cond_timedwait(&front->changed, &front->lock, &deadline) == ETIMEDOUT) break;
    }
    pthread_mutex_unlock(&front->lock);
    close(front->wake[0]);
    close(front->wake[1]);
}

void coffer_front_free(coffer_front *front) {
    if (front == NULL) return;
    pthread_mutex_lock(&front->lock);
    int left = front->live + front->pumps + front->waiters;
    pthread_mutex_unlock(&front->lock);
    if (left == 0) {
        pthread_mutex_destroy(&front->lock);
        pthread_cond_destroy(&front->changed);
        coffer_tls_free(front->tls);
        free(front);
    }
    // Otherwise a thread still holds it (stuck in a send the kernel has not failed): it is left
    // allocated rather than freed under that thread.
}
