#include "CCofferCrypto.h"

#include <dlfcn.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <pthread.h>

// The few libcrypto functions used, looked up once. The header gives their types; the
// library itself is opened with dlopen, so nothing here is linked against it.
static struct {
    int loaded;
    __typeof__(&EVP_sha256) sha256;
    __typeof__(&EVP_sha1) sha1;
    __typeof__(&EVP_md5) md5;
    __typeof__(&EVP_Digest) digest;
    __typeof__(&HMAC) hmac;
    __typeof__(&EVP_MD_CTX_new) context_new;
    __typeof__(&EVP_MD_CTX_free) context_free;
    __typeof__(&EVP_DigestInit_ex) digest_init;
    __typeof__(&EVP_DigestUpdate) digest_update;
    __typeof__(&EVP_DigestFinal_ex) digest_final;
    /// Optional: share passwords need it, signatures do not.
    __typeof__(&PKCS5_PBKDF2_HMAC) pbkdf2;
} crypto;

static pthread_once_t crypto_once = PTHREAD_ONCE_INIT;

static void load(void) {
    const char *names[] = { "libcrypto.so.3", "libcrypto.so" };
    void *library = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && library == NULL; i++) {
        library = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    }
    if (library == NULL) return;
    crypto.sha256 = (__typeof__(crypto.sha256))dlsym(library, "EVP_sha256");
    crypto.sha1 = (__typeof__(crypto.sha1))dlsym(library, "EVP_sha1");
    crypto.md5 = (__typeof__(crypto.md5))dlsym(library, "EVP_md5");
    crypto.digest = (__typeof__(crypto.digest))dlsym(library, "EVP_Digest");
    crypto.hmac = (__typeof__(crypto.hmac))dlsym(library, "HMAC");
    crypto.context_new = (__typeof__(crypto.context_new))dlsym(library, "EVP_MD_CTX_new");
    crypto.context_free = (__typeof__(crypto.context_free))dlsym(library, "EVP_MD_CTX_free");
    crypto.digest_init = (__typeof__(crypto.digest_init))dlsym(library, "EVP_DigestInit_ex");
    crypto.digest_update = (__typeof__(crypto.digest_update))dlsym(library, "EVP_DigestUpdate");
    crypto.digest_final = (__typeof__(crypto.digest_final))dlsym(library, "EVP_DigestFinal_ex");
    crypto.pbkdf2 = (__typeof__(crypto.pbkdf2))dlsym(library, "PKCS5_PBKDF2_HMAC");
    crypto.loaded = crypto.sha256 && crypto.digest && crypto.hmac && crypto.context_new && crypto.context_free
        && crypto.digest_init && crypto.digest_update && crypto.digest_final;
}

int coffer_crypto_available(void) {
    pthread_once(&crypto_once, load);
    return crypto.loaded;
}

int coffer_sha256(const void *data, size_t length, uint8_t *digest) {
    if (!coffer_crypto_available()) return 0;
    unsigned int size = 0;
    return crypto.digest(data, length, digest, &size, crypto.sha256(), NULL) == 1 && size == 32;
}

int coffer_hmac_sha256(const void *key, size_t keyLength, const void *data, size_t length, uint8_t *digest) {
    if (!coffer_crypto_available() || keyLength > (size_t)__INT_MAX__) return 0;
    unsigned int size = 0;
    return crypto.hmac(crypto.sha256(), key, (int)keyLength, data, length, digest, &size) != NULL && size == 32;
}

void *coffer_sha256_begin(void) {
    if (!coffer_crypto_available()) return NULL;
    EVP_MD_CTX *context = crypto.context_new();
    if (context == NULL) return NULL;
    if (crypto.digest_init(context, crypto.sha256(), NULL) != 1) {
        crypto.context_free(context);
        return NULL;
    }
    return context;
}

int coffer_sha256_update(void *state, const void *data, size_t length) {
    return state != NULL && crypto.digest_update((EVP_MD_CTX *)state, data, length) == 1;
}

int coffer_sha256_finish(void *state, uint8_t *digest) {
    if (state == NULL) return 0;
    unsigned int size = 0;
    int done = crypto.digest_final((EVP_MD_CTX *)state, digest, &size) == 1 && size == 32;
    crypto.context_free((EVP_MD_CTX *)state);
    return done;
}

int coffer_pbkdf2_sha256(const void *password, size_t length, const uint8_t *salt, size_t saltLength,
                         uint32_t iterations, uint8_t *key, size_t keyLength) {
    if (!coffer_crypto_available() || crypto.pbkdf2 == NULL) return 0;
    if (length > (size_t)__INT_MAX__ || saltLength > (size_t)__INT_MAX__ || keyLength > (size_t)__INT_MAX__
        || iterations == 0 || iterations > (uint32_t)__INT_MAX__) return 0;
    return crypto.pbkdf2((const char *)password, (int)length, salt, (int)saltLength, (int)iterations, crypto.sha256(),
                         (int)keyLength, key) == 1;
}

void coffer_sha256_discard(void *state) {
    if (state != NULL) crypto.context_free((EVP_MD_CTX *)state);
}

void *coffer_digest_begin(int algorithm) {
    if (!coffer_crypto_available()) return NULL;
    const EVP_MD *kind = algorithm == 1 && crypto.sha1 ? crypto.sha1() : algorithm == 2 && crypto.md5 ? crypto.md5() : NULL;
    if (kind == NULL) return NULL;
    EVP_MD_CTX *context = crypto.context_new();
    if (context == NULL) return NULL;
    if (crypto.digest_init(context, kind, NULL) != 1) {
        crypto.context_free(context);
        return NULL;
    }
    return context;
}

int coffer_digest_finish(void *state, uint8_t *digest, size_t capacity) {
    if (state == NULL || capacity < 64) return 0;
    unsigned int size = 0;
    int done = crypto.digest_final((EVP_MD_CTX *)state, digest, &size) == 1;
    crypto.context_free((EVP_MD_CTX *)state);
    return done ? (int)size : 0;
}
