/*
 * The floor for Benchmarks/rpc.py: the least a server can do to answer `files/stat` over
 * pipes, one JSON message per line. No JSON parser: the id's text and the path are found by
 * searching the line for `"id":` and `"path":"`, the item is read with one lstat, and the
 * answer is printed with the same members Coffer's has. Nothing is checked that a real
 * server must check, which is the point: no server can be faster than this on this machine.
 *
 * Build: cc -O2 -o rpc_floor_server rpc_floor_server.c      Usage: rpc_floor_server ROOT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char input[1 << 20];
static size_t filled;
static char output[1 << 16];
static size_t pending;

static void flush_output(void) {
    size_t done = 0;
    while (done < pending) {
        ssize_t written = write(1, output + done, pending - done);
        if (written <= 0) exit(1);
        done += (size_t)written;
    }
    pending = 0;
}

/* Copies the text of a JSON value starting at `value` (a number or a simple string). */
static size_t value_text(const char *value, const char *end, char *into, size_t room) {
    size_t length = 0;
    if (*value == '"') {
        into[length++] = '"';
        for (value++; value < end && *value != '"' && length + 2 < room; value++) into[length++] = *value;
        into[length++] = '"';
    } else {
        while (value < end && *value != ',' && *value != '}' && *value != ' ' && length + 1 < room) into[length++] = *value++;
    }
    into[length] = 0;
    return length;
}

static void answer(const char *root, char *line, char *end) {
    char id[64] = "null";
    char *found = strstr(line, "\"id\":");
    if (found) {
        found += 5;
        while (*found == ' ') found++;
        value_text(found, end, id, sizeof id);
    }
    if (strstr(line, "\"initialize\"")) {
        pending += (size_t)snprintf(output + pending, sizeof output - pending,
                                    "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"protocolVersion\":1}}\n", id);
        return;
    }
    char *path = strstr(line, "\"path\":");
    if (!path) return;
    path += 7;
    while (*path == ' ') path++;
    path++;
    char *close = strchr(path, '"');
    if (!close) return;
    *close = 0;
    char *relative = strchr(path, ':') ? strchr(path, ':') + 1 : path;
    while (*relative == '/') relative++;
    char full[4096];
    snprintf(full, sizeof full, "%s/%s", root, relative);
    struct stat info;
    if (lstat(full, &info) != 0) {
        pending += (size_t)snprintf(output + pending, sizeof output - pending,
                                    "{\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":-32803,\"message\":\"no such file\"}}\n", id);
        return;
    }
    struct tm utc;
    gmtime_r(&info.st_mtim.tv_sec, &utc);
    char date[40];
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &utc);
    const char *name = strrchr(relative, '/') ? strrchr(relative, '/') + 1 : relative;
    int folder = S_ISDIR(info.st_mode);
    pending += (size_t)snprintf(output + pending, sizeof output - pending,
        "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"path\":\"files:/%s\",\"name\":\"%s\",\"kind\":\"%s\","
        "\"size\":%lld,\"modified\":\"%s.%03ldZ\",\"hidden\":%s,\"type\":\"public.data\",\"excludedFromBackup\":false}}\n",
        id, relative, name, folder ? "folder" : "file", (long long)info.st_size, date, info.st_mtim.tv_nsec / 1000000,
        name[0] == '.' ? "true" : "false");
}

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    for (;;) {
        ssize_t got = read(0, input + filled, sizeof input - filled - 1);
        if (got <= 0) break;
        filled += (size_t)got;
        char *start = input;
        char *newline;
        while ((newline = memchr(start, '\n', filled - (size_t)(start - input)))) {
            *newline = 0;
            answer(argv[1], start, newline);
            if (pending > sizeof output - 1024) flush_output();
            start = newline + 1;
        }
        /* Everything read so far is answered before the next read blocks. */
        flush_output();
        filled -= (size_t)(start - input);
        memmove(input, start, filled);
    }
    flush_output();
    return 0;
}
