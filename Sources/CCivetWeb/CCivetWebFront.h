// The front on the listening socket (CCivetWebFront.c), internal to the shim.
#ifndef CCIVETWEB_FRONT_H
#define CCIVETWEB_FRONT_H

#include <stddef.h>

#include "CCivetWebTLS.h"

typedef struct coffer_front coffer_front;

/// Listens on `address` ("host:port", "[v6]:port"; port 0 lets the system choose, `*port` says
/// which) and carries each connection to CivetWeb's loopback port `inner_port`; with `tls`
/// (NULL for none), which the front then owns, every connection is TLS.
coffer_front *coffer_front_start(const char *address, int inner_port, coffer_tls *tls, int *port, char *error, size_t capacity);
/// The secret the front's headers carry.
const char *coffer_front_secret(const coffer_front *front);
/// Stops listening and ends every connection it carries.
void coffer_front_stop(coffer_front *front);

#endif
