#include "CCofferHTTP.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

// The libcurl functions used, looked up once; the header gives their types and constants,
// the library is opened with dlopen, so nothing here is linked against it.
static struct {
    int loaded;
    __typeof__(&curl_global_init) global_init;
    __typeof__(&curl_easy_init) easy_init;
    __typeof__(&curl_easy_cleanup) easy_cleanup;
    __typeof__(&curl_easy_reset) easy_reset;
    __typeof__(&curl_easy_setopt) setopt;
    __typeof__(&curl_easy_perform) perform;
    __typeof__(&curl_easy_getinfo) getinfo;
    __typeof__(&curl_easy_strerror) strerror;
    __typeof__(&curl_slist_append) slist_append;
    __typeof__(&curl_slist_free_all) slist_free_all;
} curl;

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void load(void) {
    void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) return;
#define FIND(field, name) curl.field = (__typeof__(curl.field))dlsym(library, name)
    FIND(global_init, "curl_global_init");
    FIND(easy_init, "curl_easy_init");
    FIND(easy_cleanup, "curl_easy_cleanup");
    FIND(easy_reset, "curl_easy_reset");
    FIND(setopt, "curl_easy_setopt");
    FIND(perform, "curl_easy_perform");
    FIND(getinfo, "curl_easy_getinfo");
    FIND(strerror, "curl_easy_strerror");
    FIND(slist_append, "curl_slist_append");
    FIND(slist_free_all, "curl_slist_free_all");
#undef FIND
    if (!(curl.global_init && curl.easy_init && curl.easy_cleanup && curl.easy_reset && curl.setopt && curl.perform
          && curl.getinfo && curl.strerror && curl.slist_append && curl.slist_free_all)) return;
    curl.loaded = curl.global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
}

int coffer_http_available(void) {
    pthread_once(&curl_once, load);
    return curl.loaded;
}

void *coffer_http_session_new(void) {
    return coffer_http_available() ? curl.easy_init() : NULL;
}

void coffer_http_session_free(void *session) {
    if (session != NULL) curl.easy_cleanup((CURL *)session);
}

typedef struct { coffer_http_sink sink; void *context; } sink_target;

static size_t forward(char *bytes, size_t size, size_t count, void *target) {
    sink_target *to = target;
    return to->sink(to->context, bytes, size * count);
}

typedef struct { coffer_http_source source; void *context; } source_target;

static size_t fill(char *buffer, size_t size, size_t count, void *target) {
    source_target *from = target;
    size_t got = from->source(from->context, buffer, size * count);
    return got == COFFER_HTTP_ABORT ? CURL_READFUNC_ABORT : got;
}

int coffer_http_perform(void *session, const coffer_http_request *request, long *status, char *error) {
    error[0] = '\0';
    if (!coffer_http_available() || session == NULL) {
        strcpy(error, "libcurl (libcurl.so.4) could not be loaded");
        return -1;
    }
    CURL *handle = session;
    curl.easy_reset(handle);  // keeps the connection cache
    struct curl_slist *headers = NULL;
    for (size_t i = 0; i < request->header_count; i++) headers = curl.slist_append(headers, request->headers[i]);
    // S3 answers a PUT at once; waiting a second for `100 Continue` would only slow it.
    headers = curl.slist_append(headers, "Expect:");
    sink_target header_target = { request->on_header, request->response_context };
    sink_target body_target = { request->on_body, request->response_context };
    source_target body_source = { request->body, request->body_context };

    curl.setopt(handle, CURLOPT_URL, request->url);
    curl.setopt(handle, CURLOPT_HTTPHEADER, headers);
    curl.setopt(handle, CURLOPT_NOSIGNAL, 1L);
    curl.setopt(handle, CURLOPT_ERRORBUFFER, error);
    curl.setopt(handle, CURLOPT_PROTOCOLS_STR, "http,https");
    if (request->max_redirects > 0) {
        curl.setopt(handle, CURLOPT_FOLLOWLOCATION, 1L);
        curl.setopt(handle, CURLOPT_MAXREDIRS, request->max_redirects);
        curl.setopt(handle, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    } else {
        curl.setopt(handle, CURLOPT_FOLLOWLOCATION, 0L);
    }
    curl.setopt(handle, CURLOPT_CONNECTTIMEOUT_MS, request->connect_timeout_ms);
    curl.setopt(handle, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl.setopt(handle, CURLOPT_LOW_SPEED_TIME, request->stall_timeout_s);
    if (request->ca_file != NULL) curl.setopt(handle, CURLOPT_CAINFO, request->ca_file);
    curl.setopt(handle, CURLOPT_HEADERFUNCTION, forward);
    curl.setopt(handle, CURLOPT_HEADERDATA, &header_target);
    // Bodies arrive in large pieces: fewer calls into the sink, fewer writes to disk.
    curl.setopt(handle, CURLOPT_BUFFERSIZE, 512L * 1024);
    curl.setopt(handle, CURLOPT_WRITEFUNCTION, forward);
    curl.setopt(handle, CURLOPT_WRITEDATA, &body_target);
    if (strcmp(request->method, "HEAD") == 0) {
        curl.setopt(handle, CURLOPT_NOBODY, 1L);
    } else if (request->body_length >= 0) {
        curl.setopt(handle, CURLOPT_UPLOAD, 1L);
        curl.setopt(handle, CURLOPT_INFILESIZE_LARGE, (curl_off_t)request->body_length);
        curl.setopt(handle, CURLOPT_READFUNCTION, fill);
        curl.setopt(handle, CURLOPT_READDATA, &body_source);
        // Bodies are read from files in large pieces: fewer calls, fewer small packets.
        curl.setopt(handle, CURLOPT_UPLOAD_BUFFERSIZE, 1L << 20);
        if (strcmp(request->method, "PUT") != 0) curl.setopt(handle, CURLOPT_CUSTOMREQUEST, request->method);
    } else if (strcmp(request->method, "GET") != 0) {
        curl.setopt(handle, CURLOPT_CUSTOMREQUEST, request->method);
    }
    CURLcode result = curl.perform(handle);
    *status = 0;
    curl.getinfo(handle, CURLINFO_RESPONSE_CODE, status);
    if (request->effective_url != NULL && request->effective_url_capacity > 0) {
        request->effective_url[0] = '\0';
        char *effective = NULL;
        if (curl.getinfo(handle, CURLINFO_EFFECTIVE_URL, &effective) == CURLE_OK && effective != NULL) {
            strncpy(request->effective_url, effective, request->effective_url_capacity - 1);
            request->effective_url[request->effective_url_capacity - 1] = '\0';
        }
    }
    curl.setopt(handle, CURLOPT_HTTPHEADER, NULL);
    curl.slist_free_all(headers);
    if (result != CURLE_OK && error[0] == '\0') strncpy(error, curl.strerror(result), CURL_ERROR_SIZE - 1);
    curl.setopt(handle, CURLOPT_ERRORBUFFER, NULL);
    return (int)result;
}
