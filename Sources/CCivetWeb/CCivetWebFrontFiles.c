// A file's bytes sent by the front straight from the file to the client with sendfile(2).
//
// Through CivetWeb, every byte of a download is copied four times: read into the handler's
// buffer, written to the loopback connection, read by the front, written to the client. For a
// local file, the handler instead writes its answer's head through CivetWeb as usual, offers
// the file to the front, and writes a marker: the front's secret and a number, which no client
// can know. The front carries the link's answers as before, looking for the marker only while
// an offer is open; where it comes, the front sends the file's bytes to the client itself and
// drops the marker. The order of the answer is kept because the marker travels in it.
#define _GNU_SOURCE
#include "CCivetWebFrontLink.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

enum {
    send_timeout_seconds = 5,   // as CivetWeb's request_timeout_ms: a client that takes nothing for 5 s is gone
    stall_seconds = 15,         // a waiting handler gives up when the answers ahead of its file stop for this long
    piece_size = 1 << 20,       // sent at a time, so the handler hears of progress
};

// The link numbered `number`, under the front's lock; NULL when it has ended.
static front_link *find_link(coffer_front *front, uint64_t number) {
    for (front_link *link = front->links; link != NULL; link = link->next) {
        if (link->number == number) return link;
    }
    return NULL;
}

// Tells the waiting handler, if one still waits, how its file went (under the front's lock).
static void tell_waiter(front_link *link, int done) {
    if (link->file.waiter == NULL) return;
    link->file.waiter->sent = link->file.sent;
    if (done != 0) {
        link->file.waiter->done = done;
        link->file.waiter = NULL;
    }
    pthread_cond_broadcast(&link->front->changed);
}

// Closes the offered file, which no one will send (under the front's lock).
static void drop_offered_file(front_link *link) {
    close(link->file.fd);
    link->file.fd = -1;
    link->file.state = file_none;
}

// The handler stops waiting for its file: whoever holds the file lets it go (the pump, once it
// has one under way), and the connection ends, since its answer cannot be finished.
static void abandon_offer(front_link *link) {
    link->file.waiter = NULL;
    if (link->file.state == file_offered) {
        drop_offered_file(link);
    } else if (link->file.state == file_sending) {
        link->file.state = file_abandoned;
    }
    shutdown(link->client, SHUT_RDWR);
}

int coffer_front_offer_file(coffer_front *front, uint64_t number, int fd, int64_t offset, int64_t length,
                            coffer_front_file_wait *wait, char *marker, size_t capacity) {
    if (front == NULL || offset < 0 || length <= 0) return -1;
    int copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (copy < 0) return -1;
    pthread_mutex_lock(&front->lock);
    front_link *link = find_link(front, number);
    if (link == NULL || link->file.state != file_none || front->stopping) {
        pthread_mutex_unlock(&front->lock);
        close(copy);
        return -1;
    }
    int written = snprintf(link->file.marker, sizeof link->file.marker, "\r\nX-Coffer-File: %s %llu\r\n", front->file_secret,
                           (unsigned long long)++front->files_offered);
    if (written <= 0 || (size_t)written >= sizeof link->file.marker || (size_t)written >= capacity) {
        pthread_mutex_unlock(&front->lock);
        close(copy);
        return -1;
    }
    link->file.marker_length = (size_t)written;
    link->file.state = file_offered;
    link->file.waiter = wait;
    link->file.fd = copy;
    link->file.offset = offset;
    link->file.length = length;
    link->file.sent = 0;
    __atomic_store_n(&link->file.moved, 0, __ATOMIC_RELAXED);
    front->waiters += 1;   // until it has heard how its file went (await or withdraw)
    memcpy(marker, link->file.marker, (size_t)written + 1);
    pthread_mutex_unlock(&front->lock);
    return written;
}

void coffer_front_withdraw_file(coffer_front *front, uint64_t number, coffer_front_file_wait *wait) {
    pthread_mutex_lock(&front->lock);
    front_link *link = find_link(front, number);
    if (link != NULL && link->file.waiter == wait) abandon_offer(link);
    front->waiters -= 1;
    pthread_cond_broadcast(&front->changed);
    pthread_mutex_unlock(&front->lock);
}

int64_t coffer_front_await_file(coffer_front *front, uint64_t number, coffer_front_file_wait *wait) {
    pthread_mutex_lock(&front->lock);
    int64_t last_moved = -1;
    struct timespec moved;
    clock_gettime(CLOCK_MONOTONIC, &moved);
    while (wait->done == 0) {
        front_link *link = find_link(front, number);
        if (link == NULL || link->file.waiter != wait) {
            wait->done = -1;   // (the front tells its waiter before a link ends; never seen)
            break;
        }
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        int64_t carried = __atomic_load_n(&link->file.moved, __ATOMIC_RELAXED);
        // While the file is being sent the kernel bounds each wait for the client (SO_SNDTIMEO);
        // before, the answers ahead of it must keep moving.
        if (carried != last_moved || link->file.state == file_sending) {
            last_moved = carried;
            moved = now;
        } else if (now.tv_sec - moved.tv_sec > stall_seconds) {
            abandon_offer(link);   // nothing moved
            wait->done = -1;
            break;
        }
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 1;
        pthread_cond_timedwait(&front->changed, &front->lock, &until);
    }
    int64_t sent = wait->sent;
    front->waiters -= 1;
    pthread_cond_broadcast(&front->changed);
    pthread_mutex_unlock(&front->lock);
    return sent;
}

// Sends the offered file to the client (the marker has come): 1 when all of it went.
static int send_offered_file(front_link *link) {
    coffer_front *front = link->front;
    pthread_mutex_lock(&front->lock);
    if (link->file.state != file_offered) {
        pthread_mutex_unlock(&front->lock);
        return 0;
    }
    link->file.state = file_sending;
    int fd = link->file.fd;
    off_t position = (off_t)link->file.offset;
    int64_t left = link->file.length;
    pthread_mutex_unlock(&front->lock);

    // The kernel's wait for a client that takes nothing is bounded too (sendfile honours it).
    // The kernel's wait for a client that takes nothing is bounded too (sendfile honours it).
    struct timeval limit = { send_timeout_seconds, 0 };
    setsockopt(link->client, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
    char *buffer = NULL;   // for a file the kernel cannot sendfile: read and sent instead
    while (left > 0) {
        size_t piece = left > piece_size ? (size_t)piece_size : (size_t)left;
        ssize_t moved;
        if (buffer == NULL) {
            moved = sendfile(link->client, fd, &position, piece);
            if (moved < 0 && (errno == EINVAL || errno == ENOSYS) && position == (off_t)link->file.offset) {
                buffer = malloc(piece_size);
                if (buffer == NULL) break;
                continue;
            }
        } else {
            moved = pread(fd, buffer, piece, position);
            if (moved > 0 && coffer_front_send_all(link->client, buffer, (size_t)moved) < 0) moved = -1;
            if (moved > 0) position += moved;
        }
        if (moved < 0 && errno == EINTR) continue;
        if (moved <= 0) break;   // the client is gone or stalled, or the file is shorter now
        left -= moved;
        __atomic_add_fetch(&link->file.moved, moved, __ATOMIC_RELAXED);
        pthread_mutex_lock(&front->lock);
        link->file.sent += moved;
        tell_waiter(link, 0);
        pthread_mutex_unlock(&front->lock);
    }
    free(buffer);
    struct timeval none = { 0, 0 };
    setsockopt(link->client, SOL_SOCKET, SO_SNDTIMEO, &none, sizeof none);

    pthread_mutex_lock(&front->lock);
    close(fd);
    link->file.fd = -1;
    link->file.state = file_none;
    tell_waiter(link, left == 0 ? 1 : -1);
    pthread_mutex_unlock(&front->lock);
    return left == 0;
}

// How many bytes at the end of `bytes` begin the marker (and may be the start of it).
static size_t marker_start(const char *bytes, size_t count, const char *marker, size_t marker_length) {
    size_t longest = count < marker_length - 1 ? count : marker_length - 1;
    for (size_t length = longest; length > 0; length--) {
        if (memcmp(bytes + count - length, marker, length) == 0) return length;
    }
    return 0;
}

void coffer_front_carry_answers(front_link *link, char *buffer, size_t capacity) {
    coffer_front *front = link->front;
    size_t kept = 0;   // bytes at the buffer's start that may begin the marker
    for (;;) {
        ssize_t count = recv(link->server, buffer + kept, capacity - kept, 0);
        if (count < 0 && errno == EINTR) continue;
        if (count <= 0) break;
        size_t total = kept + (size_t)count;
        kept = 0;
        char marker[marker_capacity];
        size_t marker_length = 0;
        pthread_mutex_lock(&front->lock);
        if (link->file.state == file_offered) {
            marker_length = link->file.marker_length;
            memcpy(marker, link->file.marker, marker_length);
        }
        pthread_mutex_unlock(&front->lock);
        if (marker_length == 0) {
            // No offer open, so no marker can be in what came (it is written after the offer).
            if (coffer_front_send_all(link->client, buffer, total) < 0) break;
            continue;
        }
        char *found = memmem(buffer, total, marker, marker_length);
        if (found == NULL) {
            size_t hold = marker_start(buffer, total, marker, marker_length);
            if (coffer_front_send_all(link->client, buffer, total - hold) < 0) break;
            __atomic_add_fetch(&link->file.moved, (int64_t)(total - hold), __ATOMIC_RELAXED);
            memmove(buffer, buffer + total - hold, hold);
            kept = hold;
            continue;
        }
        size_t before = (size_t)(found - buffer);
        if (coffer_front_send_all(link->client, buffer, before) < 0) break;
        if (!send_offered_file(link)) break;
        size_t after = total - before - marker_length;
        if (after > 0 && coffer_front_send_all(link->client, found + marker_length, after) < 0) break;
    }
    // An offer the answers never reached fails; its handler stops waiting.
    pthread_mutex_lock(&front->lock);
    if (link->file.state == file_offered) {
        drop_offered_file(link);
        tell_waiter(link, -1);
    }
    pthread_mutex_unlock(&front->lock);
}
