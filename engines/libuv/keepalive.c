/*
 * The libuv engine (docs/live.md, "libuv's server"): the keepalive server of
 * `timerbench live --tcp --engine libuv`, written as a libuv (Node.js) programmer writes
 * one: one loop, a uv_tcp_t per connection read with uv_read_start, and a uv_timer_t per
 * connection as its idle timer, re-armed with uv_timer_again on every keepalive. All the
 * waiting is libuv's: the loop sleeps in epoll_wait until the next timer of its heap.
 *
 * libuv's timers count whole milliseconds on the loop's cached clock (uv_now, taken from
 * CLOCK_MONOTONIC, or its coarse variant, when the loop wakes), which lags the instant a
 * keepalive is read. So that a timer never fires before the read time plus the timeout,
 * its repeat is the time from uv_now to that deadline rounded up to the millisecond: the
 * timeout plus the loop clock's lag. The deadline the server reports is the exact one.
 * When the timer fires, the server reads the connection once more without waiting, as the
 * Rust and Go servers do: a keepalive already there re-arms it instead of the close.
 *
 * It speaks the protocol of the Go server (engines/go/keepalive.go): on stdin, u64
 * little-endian words: the fill's count and (connection, delay in ticks) pairs, the
 * arrivals' count and pairs, then once `ready` tick 0 on CLOCK_MONOTONIC, then the end
 * word; on stdout, lines `listening PORT`, `ready`, `result {JSON}` or `error: WHY`.
 *
 * Usage: libuv-keepalive live-tcp connections=N tick-ns=T idle-ns=I [port=P]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#define RECORD_BYTES 16
#define HELLO_TAG (UINT64_C(1) << 63)
/* Sixteen records: a keepalive is one, and many idle connections keep small buffers. */
#define CONNECTION_BUFFER (16 * RECORD_BYTES)
/* The most entries a table from timerbench may have: a guard against a garbled count. */
#define MAX_TABLE_ENTRIES (UINT64_C(1) << 26)

/* How a connection ended (the result's `ends` say it with these numbers, as Go's do). */
enum { STILL_OPEN, CLOSED_BY_TIMER, CLOSED_BY_CLIENT, CLOSED_AT_END, CLOSED_FOR_PROTOCOL };

typedef struct {
    int64_t connection, delay_ticks;
} pair_t;

typedef struct {
    uv_tcp_t tcp; /* first: the handle's address is the connection's */
    uv_timer_t timer;
    int64_t slot; /* -1 until its hello */
    unsigned char buf[CONNECTION_BUFFER];
    size_t have;
    int64_t deadline; /* CLOCK_MONOTONIC ns of the idle timeout, -1 if none */
    int64_t (*reads)[4]; /* connection, arrival index, sent, read */
    size_t nreads;
    int how;
    int64_t close_ns;
    int64_t rearmed;
    char *problem;
} conn_t;

typedef struct {
    int64_t wall_ns, cpu_ns, voluntary, involuntary;
} window_t;

static uv_loop_t *loop;
static uv_tcp_t listener;
static int64_t connections, tick_ns, idle_ns, port;
static int64_t *fill_ticks;
static pair_t *arrivals;
static uint64_t narrivals;
static int64_t *keepalives;
static conn_t **conns;
static int64_t identified;
static int64_t origin;
static int ending;
static window_t workload;

/* stdin, read through a buffer of its own: the tables, then the origin and end words. */
static unsigned char in_buf[1 << 16];
static size_t in_at, in_len;
static uv_async_t words_async;
static pthread_mutex_t words_lock = PTHREAD_MUTEX_INITIALIZER;
static int words_read, words_closed, begun;

static void fail(const char *format, ...) {
    va_list args;
    va_start(args, format);
    fputs("error: ", stdout);
    vprintf(format, args);
    fputs("\n", stdout);
    fflush(stdout);
    va_end(args);
    exit(1);
}

static int64_t mono_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int read_word(uint64_t *word) {
    unsigned char bytes[8];
    for (size_t got = 0; got < 8;) {
        if (in_at == in_len) {
            ssize_t n = read(0, in_buf, sizeof in_buf);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                return 0;
            in_at = 0, in_len = (size_t)n;
        }
        bytes[got++] = in_buf[in_at++];
    }
    *word = 0;
    for (int i = 7; i >= 0; i--)
        *word = *word << 8 | bytes[i];
    return 1;
}

static uint64_t le64(const unsigned char *at) {
    uint64_t word = 0;
    for (int i = 7; i >= 0; i--)
        word = word << 8 | at[i];
    return word;
}

static pair_t *read_pairs(const char *what, uint64_t *count) {
    if (!read_word(count) || *count > MAX_TABLE_ENTRIES)
        fail("reading the %s from timerbench: a bad or missing count", what);
    pair_t *pairs = calloc(*count ? *count : 1, sizeof *pairs);
    for (uint64_t i = 0; i < *count; i++) {
        uint64_t slot, delay;
        if (!read_word(&slot) || !read_word(&delay) || slot >= (uint64_t)connections ||
            delay > INT32_MAX)
            fail("reading the %s from timerbench: entry %" PRIu64 " is bad or cut", what, i);
        pairs[i] = (pair_t){(int64_t)slot, (int64_t)delay};
    }
    return pairs;
}

static void set_up(int argc, char **argv) {
    connections = tick_ns = idle_ns = -1;
    port = 0;
    for (int i = 0; i < argc; i++) {
        char *eq = strchr(argv[i], '='), *end;
        if (!eq)
            fail("%s: not key=value", argv[i]);
        long long value = strtoll(eq + 1, &end, 10);
        size_t key = (size_t)(eq - argv[i]);
        int64_t *into = key == 11 && !strncmp(argv[i], "connections", key) ? &connections
                        : key == 7 && !strncmp(argv[i], "tick-ns", key) ? &tick_ns
                        : key == 7 && !strncmp(argv[i], "idle-ns", key) ? &idle_ns
                        : key == 4 && !strncmp(argv[i], "port", key) ? &port
                                                                     : NULL;
        if (!into || *end || end == eq + 1)
            fail("%s: live-tcp needs connections>=1 tick-ns>=1 idle-ns>=0 [port=0..65535]", argv[i]);
        *into = value;
    }
    if (connections < 1 || tick_ns < 1 || idle_ns < 0 || port < 0 || port > 65535)
        fail("live-tcp needs connections>=1 tick-ns>=1 idle-ns>=0 [port=0..65535]");
    fill_ticks = malloc(connections * sizeof *fill_ticks);
    keepalives = calloc(connections, sizeof *keepalives);
    conns = calloc(connections, sizeof *conns);
    for (int64_t i = 0; i < connections; i++)
        fill_ticks[i] = -1;
    uint64_t nfill;
    pair_t *fill = read_pairs("fill", &nfill);
    for (uint64_t i = 0; i < nfill; i++)
        fill_ticks[fill[i].connection] = fill[i].delay_ticks;
    free(fill);
    arrivals = read_pairs("arrivals", &narrivals);
    for (uint64_t i = 0; i < narrivals; i++)
        keepalives[arrivals[i].connection]++;
}

static void on_timer(uv_timer_t *timer);

/* Arms the connection's timer for `deadline`: uv_timer_again with the repeat from the
 * loop's clock to the deadline, rounded up to the millisecond, so never early. */
static void arm(conn_t *c, int64_t deadline) {
    c->deadline = deadline;
    int64_t due_ms = (deadline + 999999) / 1000000;
    int64_t now_ms = (int64_t)uv_now(loop);
    uint64_t repeat = due_ms > now_ms ? (uint64_t)(due_ms - now_ms) : 1;
    uv_timer_set_repeat(&c->timer, repeat);
    /* uv_timer_again needs a timer started once: the first arming starts it. */
    if (uv_timer_again(&c->timer) == UV_EINVAL)
        uv_timer_start(&c->timer, on_timer, repeat, repeat);
}

static void close_for(conn_t *c, int how) {
    uv_timer_stop(&c->timer);
    uv_read_stop((uv_stream_t *)&c->tcp);
    uv_close((uv_handle_t *)&c->tcp, NULL);
    uv_close((uv_handle_t *)&c->timer, NULL);
    c->close_ns = mono_now();
    c->how = how;
}

/* Files the whole records among the `n` bytes just read at `now`: each keepalive moves the
 * deadline to now plus its timeout. 0 on a record that is not one of its keepalives. */
static int take(conn_t *c, size_t n, int64_t now) {
    c->have += n;
    size_t whole = c->have / RECORD_BYTES * RECORD_BYTES;
    int64_t deadline = -1;
    for (size_t at = 0; at < whole; at += RECORD_BYTES) {
        uint64_t index = le64(c->buf + at);
        int64_t sent = (int64_t)le64(c->buf + at + 8);
        if (index >= narrivals || arrivals[index].connection != c->slot) {
            if (asprintf(&c->problem,
                         "connection %" PRId64 " sent a record for operation %" PRIu64
                         ", not one of its keepalives (a protocol error)",
                         c->slot, index) < 0)
                c->problem = NULL;
            return 0;
        }
        deadline = now + arrivals[index].delay_ticks * tick_ns;
        int64_t *read = c->reads[c->nreads++];
        read[0] = c->slot, read[1] = (int64_t)index, read[2] = sent, read[3] = now;
    }
    memmove(c->buf, c->buf + whole, c->have - whole);
    c->have -= whole;
    if (deadline >= 0)
        arm(c, deadline);
    return 1;
}

/* Reads once without waiting: the keepalives taken, and how the connection ended if that
 * read ended it, else STILL_OPEN. */
static int read_now(conn_t *c, size_t *taken) {
    uv_os_fd_t fd;
    *taken = 0;
    if (uv_fileno((uv_handle_t *)&c->tcp, &fd) != 0)
        return CLOSED_BY_CLIENT;
    ssize_t n = recv(fd, c->buf + c->have, sizeof c->buf - c->have, MSG_DONTWAIT);
    if (n < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK ? STILL_OPEN : CLOSED_BY_CLIENT;
    if (n == 0)
        return CLOSED_BY_CLIENT;
    size_t before = c->nreads;
    if (!take(c, (size_t)n, mono_now()))
        return CLOSED_FOR_PROTOCOL;
    *taken = c->nreads - before;
    return STILL_OPEN;
}

static void on_timer(uv_timer_t *timer) {
    conn_t *c = timer->data;
    size_t taken;
    int ended = read_now(c, &taken);
    if (ended != STILL_OPEN)
        close_for(c, ended);
    else if (taken > 0)
        c->rearmed++; /* take re-armed it */
    else
        close_for(c, CLOSED_BY_TIMER);
}

static void on_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf) {
    (void)suggested;
    conn_t *c = (conn_t *)handle;
    *buf = uv_buf_init((char *)c->buf + c->have, (unsigned)(sizeof c->buf - c->have));
}

static void on_read(uv_stream_t *stream, ssize_t n, const uv_buf_t *buf) {
    (void)buf;
    conn_t *c = (conn_t *)stream;
    if (n == 0)
        return;
    if (n < 0) {
        close_for(c, CLOSED_BY_CLIENT);
        return;
    }
    if (!take(c, (size_t)n, mono_now()))
        close_for(c, CLOSED_FOR_PROTOCOL);
}

static void on_words(uv_async_t *async);

/* The origin and the end word, read on a thread of their own: the loop must not block. */
static void *read_words(void *unused) {
    (void)unused;
    uint64_t word;
    for (int i = 0; i < 2; i++) {
        int ok = read_word(&word);
        pthread_mutex_lock(&words_lock);
        if (ok && i == 0)
            origin = (int64_t)word;
        if (ok)
            words_read++;
        else
            words_closed = 1;
        pthread_mutex_unlock(&words_lock);
        uv_async_send(&words_async);
        if (!ok)
            break;
    }
    return NULL;
}

/* Reads a connection's hello before tick 0; once every connection said it, `ready`. */
static void on_hello(uv_stream_t *stream, ssize_t n, const uv_buf_t *buf) {
    (void)buf;
    conn_t *c = (conn_t *)stream;
    if (n < 0)
        fail("reading a connection's hello: %s", uv_strerror((int)n));
    c->have += (size_t)n;
    if (c->have < RECORD_BYTES)
        return;
    uint64_t word = le64(c->buf), index = word & ~HELLO_TAG;
    if (!(word & HELLO_TAG) || index >= (uint64_t)connections)
        fail("a connection's first record is %#" PRIx64 ", not a hello of one of %" PRId64
             " connections", word, connections);
    if (conns[index])
        fail("two connections said hello as connection %" PRIu64, index);
    uv_read_stop(stream);
    c->slot = (int64_t)index;
    memmove(c->buf, c->buf + RECORD_BYTES, c->have - RECORD_BYTES);
    c->have -= RECORD_BYTES;
    c->reads = malloc((keepalives[index] ? keepalives[index] : 1) * sizeof *c->reads);
    conns[index] = c;
    if (++identified == connections) {
        uv_close((uv_handle_t *)&listener, NULL);
        printf("ready\n");
        fflush(stdout);
        pthread_t thread;
        if (pthread_create(&thread, NULL, read_words, NULL) != 0)
            fail("cannot start the thread that reads stdin");
        pthread_detach(thread);
    }
}

static void on_connection(uv_stream_t *server, int status) {
    if (status < 0)
        fail("accepting a connection: %s", uv_strerror(status));
    conn_t *c = calloc(1, sizeof *c);
    c->slot = -1, c->deadline = -1;
    uv_tcp_init(loop, &c->tcp);
    uv_timer_init(loop, &c->timer);
    c->timer.data = c;
    if (uv_accept(server, (uv_stream_t *)&c->tcp) != 0)
        fail("accepting a connection");
    uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_hello);
}

static window_t usage_now(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    int64_t cpu = ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
                  ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
    return (window_t){mono_now(), cpu, ru.ru_nvcsw, ru.ru_nivcsw};
}

static window_t since(window_t begin) {
    window_t now = usage_now();
    return (window_t){now.wall_ns - begin.wall_ns, now.cpu_ns - begin.cpu_ns,
                      now.voluntary - begin.voluntary, now.involuntary - begin.involuntary};
}

/* Tick 0: every connection's fill deadline armed and its reading started. */
static void begin(void) {
    uv_update_time(loop);
    for (int64_t i = 0; i < connections; i++) {
        conn_t *c = conns[i];
        if (fill_ticks[i] >= 0)
            arm(c, origin + fill_ticks[i] * tick_ns);
        uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
    }
    int64_t wait = origin - mono_now();
    if (wait > 0) {
        struct timespec ts = {wait / 1000000000, wait % 1000000000};
        nanosleep(&ts, NULL);
    }
    workload = usage_now();
}

/* The end of the workload: each connection's last keepalives read, then it is closed. */
static void end(void) {
    ending = 1;
    for (int64_t i = 0; i < connections; i++) {
        conn_t *c = conns[i];
        if (c->how != STILL_OPEN)
            continue;
        for (;;) {
            size_t taken;
            int ended = read_now(c, &taken);
            if (ended != STILL_OPEN) {
                close_for(c, ended);
                break;
            }
            if (taken == 0) {
                close_for(c, CLOSED_AT_END);
                break;
            }
        }
    }
    uv_close((uv_handle_t *)&words_async, NULL);
}

static void on_words(uv_async_t *async) {
    (void)async;
    pthread_mutex_lock(&words_lock);
    int read = words_read, closed = words_closed;
    pthread_mutex_unlock(&words_lock);
    if (!begun && read == 0 && closed)
        exit(0); /* timerbench gave up before tick 0: nothing more to do */
    if (!begun && read >= 1) {
        begun = 1;
        begin();
    }
    if (begun && !ending && (read >= 2 || closed))
        end();
}

static void json_string(const char *text) {
    putchar('"');
    for (const char *p = text; *p; p++) {
        if (*p == '"' || *p == '\\')
            printf("\\%c", *p);
        else if ((unsigned char)*p < 0x20)
            printf("\\u%04x", *p);
        else
            putchar(*p);
    }
    putchar('"');
}

static void json_window(const char *name, window_t w) {
    printf("\"%s\":{\"wall_ns\":%" PRId64 ",\"cpu_ns\":%" PRId64
           ",\"voluntary_switches\":%" PRId64 ",\"involuntary_switches\":%" PRId64 "}",
           name, w.wall_ns, w.cpu_ns, w.voluntary, w.involuntary);
}

/* Every keepalive read and every connection's end, for timerbench to check; the usage. */
static void answer(window_t idle) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("result {\"runtime\":\"libuv\",\"runtime_version\":");
    json_string(uv_version_string());
    printf(",\"runtime_flags\":[],\"reads\":[");
    const char *comma = "";
    for (int64_t i = 0; i < connections; i++)
        for (size_t r = 0; r < conns[i]->nreads; r++, comma = ",") {
            int64_t *read = conns[i]->reads[r];
            printf("%s[%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 "]", comma, read[0],
                   read[1], read[2], read[3]);
        }
    printf("],\"ends\":[");
    int64_t rearmed = 0;
    for (int64_t i = 0; i < connections; i++) {
        conn_t *c = conns[i];
        rearmed += c->rearmed;
        printf("%s[%" PRId64 ",%d,%" PRId64 ",%" PRId64 "]", i ? "," : "", c->slot, c->how,
               c->close_ns, c->deadline);
    }
    printf("],\"rearmed\":%" PRId64 ",\"problems\":[", rearmed);
    comma = "";
    for (int64_t i = 0; i < connections; i++)
        if (conns[i]->problem) {
            fputs(comma, stdout);
            json_string(conns[i]->problem);
            comma = ",";
        }
    printf("],");
    json_window("workload", workload);
    putchar(',');
    json_window("idle", idle);
    printf(",\"gc_cycles\":0,\"gc_pause_ns\":0,\"peak_rss_bytes\":%" PRId64 ",\"server\":",
           (int64_t)ru.ru_maxrss * 1024);
    json_string("one libuv loop; a uv_tcp_t per connection read with uv_read_start and a "
                "uv_timer_t per connection re-armed with uv_timer_again on every keepalive "
                "(repeat: from the loop's clock to the read time plus the timeout, whole "
                "milliseconds rounded up), an entry of the loop's timer heap");
    printf(",\"cpu_of\":");
    json_string("the whole server process (getrusage RUSAGE_SELF, user + system), between "
                "the phase's ends as the process itself read them");
    printf(",\"wakeups_of\":");
    json_string("not counted: libuv counts no waits of its loop; the process's voluntary "
                "context switches (the loop blocking, then woken) are in voluntary_switches");
    printf("}\n");
    fflush(stdout);
}

int main(int argc, char **argv) {
    if (argc < 2 || strcmp(argv[1], "live-tcp") != 0)
        fail("the libuv engine has only the `live-tcp` mode (a live keepalive server)");
    set_up(argc - 2, argv + 2);
    loop = uv_default_loop();
    struct sockaddr_in address;
    uv_ip4_addr("127.0.0.1", (int)port, &address);
    uv_tcp_init(loop, &listener);
    int bound = uv_tcp_bind(&listener, (const struct sockaddr *)&address, 0);
    if (bound == 0)
        bound = uv_listen((uv_stream_t *)&listener, SOMAXCONN, on_connection);
    if (bound != 0)
        fail("cannot listen on 127.0.0.1:%" PRId64
             " (%s); choose another --port, or 0 for any free one",
             port, uv_strerror(bound));
    struct sockaddr_storage name;
    int length = sizeof name;
    uv_tcp_getsockname(&listener, (struct sockaddr *)&name, &length);
    printf("listening %d\n", ntohs(((struct sockaddr_in *)&name)->sin_port));
    fflush(stdout);
    uv_async_init(loop, &words_async, on_words);
    /* Runs until every handle is closed: the listener once all said hello, the
     * connections and their timers at the end (or on their timers), the async at the end. */
    uv_run(loop, UV_RUN_DEFAULT);
    window_t done = since(workload);
    window_t idle = usage_now();
    struct timespec ts = {idle_ns / 1000000000, idle_ns % 1000000000};
    nanosleep(&ts, NULL);
    workload = done;
    answer(since(idle));
    return 0;
}
