// SHA-256 and HMAC-SHA-256 from the system's libcrypto (OpenSSL 3), loaded when first
// asked for: a process that never signs a request never maps the library.
// Each function returns 1 on success and 0 when libcrypto cannot be loaded or fails.
#ifndef CCOFFER_CRYPTO_H
#define CCOFFER_CRYPTO_H

#include <stddef.h>
#include <stdint.h>

/// Whether libcrypto could be loaded (tried once).
int coffer_crypto_available(void);

/// SHA-256 of `length` bytes into `digest` (32 bytes).
int coffer_sha256(const void *data, size_t length, uint8_t *digest);

/// HMAC-SHA-256 of `length` bytes with `key` into `digest` (32 bytes).
int coffer_hmac_sha256(const void *key, size_t keyLength, const void *data, size_t length, uint8_t *digest);

/// A SHA-256 fed in pieces (a file streamed to an upload): `NULL` when libcrypto is missing.
void *coffer_sha256_begin(void);
int coffer_sha256_update(void *state, const void *data, size_t length);
/// Writes the digest and frees the state (also when it fails).
int coffer_sha256_finish(void *state, uint8_t *digest);
/// Frees a state without a digest (an upload abandoned halfway).
void coffer_sha256_discard(void *state);

/// PBKDF2 with HMAC-SHA-256 (a slow hash for passwords): 1 on success, 0 without libcrypto.
int coffer_pbkdf2_sha256(const void *password, size_t length, const uint8_t *salt, size_t saltLength,
                         uint32_t iterations, uint8_t *key, size_t keyLength);
/// A digest fed in pieces with coffer_sha256_update: algorithm 1 is SHA-1, 2 is MD5 (the
/// checksums WebDAV sync clients send). NULL without libcrypto.
void *coffer_digest_begin(int algorithm);
/// Writes the digest (at most 64 bytes, `capacity` at least that) and frees the state;
/// returns its length, 0 on failure.
int coffer_digest_finish(void *state, uint8_t *digest, size_t capacity);

#endif
