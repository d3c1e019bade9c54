// TLS for the front (CCivetWebTLS.c), internal to the shim: OpenSSL loaded when first asked for.
#ifndef CCIVETWEB_TLS_H
#define CCIVETWEB_TLS_H

#include <stddef.h>

typedef struct coffer_tls coffer_tls;

/// A server's TLS: its certificate chain and private key (PEM files). NULL with the reason in
/// `error` when OpenSSL cannot be loaded or either file cannot be used.
coffer_tls *coffer_tls_load(const char *certificate, const char *key, char *error, size_t capacity);
void coffer_tls_free(coffer_tls *tls);
/// Carries one connection: TLS on `encrypted` (the client's socket), plain bytes on `plain`,
/// until either side ends, the connection stalls, or `*stopping` becomes nonzero. Closes neither.
/// 0 when it ended cleanly.
int coffer_tls_pump(coffer_tls *tls, int encrypted, int plain, const int *stopping);

#endif
