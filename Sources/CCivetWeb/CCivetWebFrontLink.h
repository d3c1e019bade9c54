// The front's state, shared by CCivetWebFront.c (connections, requests, answers) and
// CCivetWebFrontFiles.c (a file's bytes sent straight to the client). Not part of the module's
// interface.
#ifndef CCIVETWEB_FRONT_LINK_H
#define CCIVETWEB_FRONT_LINK_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "CCivetWebFront.h"

enum {
    head_capacity = 64 * 1024,   // a head longer than CivetWeb accepts (16 KiB) still reaches it whole
    copy_capacity = 256 * 1024,
    line_capacity = 4096,        // a chunk's size line
    splice_threshold = 256 * 1024,   // a body's rest from this size on goes socket to socket (splice)
    splice_capacity = 1024 * 1024,   // the pipe it goes through, when the kernel allows
    connection_limit = 1024,     // beyond it, new clients wait in the kernel's queue
    marker_capacity = 96,
};

typedef struct front_link front_link;

struct coffer_front {
    int listener;
    int wake[2];
    int inner_port;
    char secret[33];
    char file_secret[33];     // in the markers of offered files (another, so a marker tells nothing of `secret`)
    pthread_t acceptor;
    pthread_mutex_t lock;
    pthread_cond_t changed;   // links, pumps, waiters and offered files changed
    int live;
    int stopping;
    front_link *links;
    coffer_tls *tls;
    int pumps;                // TLS connections being carried
    uint64_t next_link;       // the last link's number
    uint64_t files_offered;   // for each offer's marker
    int waiters;              // handlers between offering a file and hearing how it went
};

// What becomes of a file a handler offers (CCivetWebFrontFiles.c).
typedef enum { file_none, file_offered, file_sending, file_abandoned } file_state;

struct front_link {
    coffer_front *front;
    uint64_t number;   // how handlers name it (X-Coffer-Link)
    int client;
    int server;
    int ended;         // how many of its two threads have ended
    char peer[64];
    front_link *next;
    front_link *previous;
    // A file offered by the handler of the link's current request, sent to the client when its
    // marker comes through the answers (all guarded by the front's lock).
    struct {
        file_state state;
        coffer_front_file_wait *waiter;   // the handler's, while it waits
        int fd;
        int64_t offset;
        int64_t length;
        int64_t sent;
        int64_t moved;   // bytes the link has carried to the client since the offer (atomic)
        char marker[marker_capacity];
        size_t marker_length;
    } file;
};

int coffer_front_send_all(int fd, const char *bytes, size_t length);

// Carries the link's answers from CivetWeb to the client until either side ends, sending an
// offered file where its marker comes.
void coffer_front_carry_answers(front_link *link, char *buffer, size_t capacity);

#endif
