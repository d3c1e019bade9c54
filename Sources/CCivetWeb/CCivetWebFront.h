// The front on the listening socket (CCivetWebFront.c), internal to the shim.
#ifndef CCIVETWEB_FRONT_H
#define CCIVETWEB_FRONT_H

#include <stddef.h>
#include <stdint.h>

#include "CCivetWebTLS.h"

typedef struct coffer_front coffer_front;

/// Listens on `address` ("host:port", "[v6]:port"; port 0 lets the system choose, `*port` says
/// which) and carries each connection to CivetWeb's loopback port `inner_port`; with `tls`
/// (NULL for none), which the front then owns, every connection is TLS.
coffer_front *coffer_front_start(const char *address, int inner_port, coffer_tls *tls, int *port, char *error, size_t capacity);
/// The secret the front's headers carry.
const char *coffer_front_secret(const coffer_front *front);
/// Stops listening and ends every connection it carries (10 s at most); handlers may still
/// call it until CivetWeb has stopped.
void coffer_front_stop(coffer_front *front);
/// Frees a stopped front, once CivetWeb's handlers are done with it.
void coffer_front_free(coffer_front *front);

// A file's bytes sent by the front straight to the client (sendfile(2)), instead of through
// CivetWeb and the loopback connection: the handler offers `length` bytes of `fd` from `offset`
// on the link `number` (its request's X-Coffer-Link), then writes the marker it is given as its
// answer's next bytes, then waits. The front keeps a copy of the descriptor.
// What the front tells the handler of its file; the handler's own, kept until it has waited.
typedef struct {
    int done;       // 0 while it goes, 1 when all was sent, -1 when not
    int64_t sent;
} coffer_front_file_wait;
// Offer: the marker's length (written into `marker`), or -1 when the link cannot take one.
int coffer_front_offer_file(coffer_front *front, uint64_t number, int fd, int64_t offset, int64_t length,
                            coffer_front_file_wait *wait, char *marker, size_t capacity);
// Waits until the offered file is sent, or could not all be (the connection is then closed):
// how many bytes went. Gives up when the link carries nothing to the client for 15 s.
int64_t coffer_front_await_file(coffer_front *front, uint64_t number, coffer_front_file_wait *wait);
// Takes back an offer whose marker could not be written; the connection is closed.
void coffer_front_withdraw_file(coffer_front *front, uint64_t number, coffer_front_file_wait *wait);

#endif
