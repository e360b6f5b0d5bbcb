/*
 * The libev engine (docs/live.md, "libev's servers"): the keepalive server of
 * `timerbench live --tcp --engine libev-timer-again` (or `libev-lazy`), written as a libev
 * programmer writes one after the manual's section "Be smart about timeouts": one loop, an
 * ev_io per connection and an ev_timer per connection as its idle timer, handled by one of
 * the section's strategies, chosen by the engine's name:
 *
 *   libev-timer-again  strategy 2, "use a timer and re-start it with ev_timer_again":
 *                      the timer's repeat is the timeout and every keepalive calls
 *                      ev_timer_again, which moves the timer in the loop's heap;
 *   libev-lazy         strategy 3, "let the timer time out, but then re-arm it as
 *                      required": a keepalive only records the new deadline, no libev call;
 *                      when the timer fires before that deadline, the callback starts it
 *                      again for the rest, and only a timer that finds its deadline passed
 *                      is a timeout.
 *
 * libev starts a timer from the loop's cached time (ev_now, taken when the loop woke),
 * which lags the instant a keepalive is read. So that a timer never fires before the read
 * time plus the timeout, every arming adds that lag as the manual's "The special problem
 * of time updates" does (ev_time () - ev_now ()), and EARLY_GUARD_S for the rounding of
 * libev's floating-point seconds. The deadline the server reports is the exact one. When a
 * timer finds its deadline passed, the server reads the connection once more without
 * waiting, as the Rust, Go, tokio and libuv servers do: a keepalive already there re-arms
 * it instead of the close.
 *
 * It speaks the protocol of the Go server (engines/go/keepalive.go): on stdin, u64
 * little-endian words: the fill's count and (connection, delay in ticks) pairs, the
 * arrivals' count and pairs, then once `ready` tick 0 on CLOCK_MONOTONIC, then the end
 * word; on stdout, lines `listening PORT`, `ready`, `result {JSON}` or `error: WHY`.
 *
 * Usage: libev-keepalive ENGINE live-tcp connections=N tick-ns=T idle-ns=I [port=P],
 * ENGINE `libev-timer-again` or `libev-lazy` (the strategy).
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
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <ev.h>

#define RECORD_BYTES 16
#define HELLO_TAG (UINT64_C(1) << 63)
/* Sixteen records: a keepalive is one, and many idle connections keep small buffers. */
#define CONNECTION_BUFFER (16 * RECORD_BYTES)
/* The most entries a table from timerbench may have: a guard against a garbled count. */
#define MAX_TABLE_ENTRIES (UINT64_C(1) << 26)
/* Added to every arming: a double of seconds since the epoch resolves about a quarter of a
 * microsecond, so the lag correction may be short by that much; far below the loop's
 * millisecond waits, and enough that no rounding makes a timer early. */
#define EARLY_GUARD_S 10e-6

/* How a connection ended (the result's `ends` say it with these numbers, as Go's do). */
enum { STILL_OPEN, CLOSED_BY_TIMER, CLOSED_BY_CLIENT, CLOSED_AT_END, CLOSED_FOR_PROTOCOL };

/* The manual's strategies this server has (its numbering). */
enum { TIMER_AGAIN = 2, LAZY = 3 };

typedef struct {
    int64_t connection, delay_ticks;
} pair_t;

typedef struct {
    ev_io io; /* first: the watcher's address is the connection's */
    ev_timer timer;
    int fd;
    int64_t slot; /* -1 until its hello */
    unsigned char buf[CONNECTION_BUFFER];
    size_t have;
    int64_t deadline; /* CLOCK_MONOTONIC ns of the idle timeout, -1 if none */
    int64_t armed_for; /* lazy: the deadline its timer was last started for */
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

static struct ev_loop *evloop;
static int strategy;
static int listen_fd;
static ev_io listener;
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
static ev_async words_async;
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

static uint64_t le64(const unsigned char *at) {
    uint64_t word = 0;
    for (int i = 7; i >= 0; i--)
        word = word << 8 | at[i];
    return word;
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
    *word = le64(bytes);
    return 1;
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

/* The key=value arguments, then the fill and the arrivals from stdin. */
static void set_up(int argc, char **argv) {
    static const char usage[] =
        "live-tcp needs connections>=1 tick-ns>=1 idle-ns>=0 [port=0..65535]";
    connections = tick_ns = idle_ns = -1;
    port = 0;
    for (int i = 0; i < argc; i++) {
        char *eq = strchr(argv[i], '='), *end;
        if (!eq)
            fail("%s: not key=value", argv[i]);
        *eq = '\0';
        long long value = strtoll(eq + 1, &end, 10);
        int64_t *into = !strcmp(argv[i], "connections") ? &connections
                        : !strcmp(argv[i], "tick-ns")   ? &tick_ns
                        : !strcmp(argv[i], "idle-ns")   ? &idle_ns
                        : !strcmp(argv[i], "port")      ? &port
                                                        : NULL;
        *eq = '=';
        if (!into || *end || end == eq + 1)
            fail("%s: %s", argv[i], usage);
        *into = value;
    }
    if (connections < 1 || tick_ns < 1 || idle_ns < 0 || port < 0 || port > 65535)
        fail("%s", usage);
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

/* Seconds from the loop's time, which ev_timer counts from, to `deadline`: the time left
 * on CLOCK_MONOTONIC plus the loop clock's lag (the manual's ev_time () - ev_now ()) plus
 * EARLY_GUARD_S, never less than the guard. */
static ev_tstamp from_loop_time(int64_t deadline) {
    ev_tstamp left = (ev_tstamp)(deadline - mono_now()) * 1e-9;
    ev_tstamp after = left + (ev_time() - ev_now(evloop)) + EARLY_GUARD_S;
    return after > EARLY_GUARD_S ? after : EARLY_GUARD_S;
}

/* Strategy 3's arming: a one-shot timer for the rest of the time to the deadline. */
static void lazy_start(conn_t *c) {
    ev_timer_stop(evloop, &c->timer);
    ev_timer_set(&c->timer, from_loop_time(c->deadline), 0.);
    ev_timer_start(evloop, &c->timer);
    c->armed_for = c->deadline;
}

/* The connection's deadline just moved to `deadline` (its fill, or a keepalive). */
static void activity(conn_t *c, int64_t deadline) {
    c->deadline = deadline;
    if (strategy == TIMER_AGAIN) {
        /* The repeat is the timeout (plus the loop clock's lag); ev_timer_again starts the
         * timer if it is not running and otherwise moves it. */
        c->timer.repeat = from_loop_time(deadline);
        ev_timer_again(evloop, &c->timer);
    } else if (!ev_is_active(&c->timer) || deadline < c->armed_for) {
        /* Lazy: the deadline is only recorded, unless no timer runs (before the first
         * arming, or inside its callback) or the timeout got shorter than the timer
         * already set (the manual: "stopping the timer and calling the callback"). */
        lazy_start(c);
    }
}

static void close_for(conn_t *c, int how) {
    ev_timer_stop(evloop, &c->timer);
    ev_io_stop(evloop, &c->io);
    close(c->fd);
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
        activity(c, deadline);
    return 1;
}

/* Reads once without waiting: the keepalives taken, and how the connection ended if that
 * read ended it, else STILL_OPEN. */
static int read_now(conn_t *c, size_t *taken) {
    *taken = 0;
    ssize_t n = recv(c->fd, c->buf + c->have, sizeof c->buf - c->have, MSG_DONTWAIT);
    if (n < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? STILL_OPEN
                                                                          : CLOSED_BY_CLIENT;
    if (n == 0)
        return CLOSED_BY_CLIENT;
    size_t before = c->nreads;
    if (!take(c, (size_t)n, mono_now()))
        return CLOSED_FOR_PROTOCOL;
    *taken = c->nreads - before;
    return STILL_OPEN;
}

static void on_timer(struct ev_loop *l, ev_timer *timer, int revents) {
    (void)l, (void)revents;
    conn_t *c = timer->data;
    if (strategy == LAZY && mono_now() < c->deadline) {
        /* Keepalives moved the deadline since the timer was set: start it again for the
         * rest, the earliest the timeout can come (the manual's "simply restart"). */
        lazy_start(c);
        return;
    }
    size_t taken;
    int ended = read_now(c, &taken);
    if (ended != STILL_OPEN)
        close_for(c, ended);
    else if (taken > 0)
        c->rearmed++; /* take re-armed it */
    else
        close_for(c, CLOSED_BY_TIMER);
}

static void on_readable(struct ev_loop *l, ev_io *io, int revents) {
    (void)l, (void)revents;
    conn_t *c = (conn_t *)io;
    size_t taken;
    int ended = read_now(c, &taken);
    if (ended != STILL_OPEN)
        close_for(c, ended);
}

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
        ev_async_send(evloop, &words_async);
        if (!ok)
            break;
    }
    return NULL;
}

/* Reads a connection's hello before tick 0; once every connection said it, `ready`. */
static void on_hello(struct ev_loop *l, ev_io *io, int revents) {
    (void)revents;
    conn_t *c = (conn_t *)io;
    ssize_t n = recv(c->fd, c->buf + c->have, RECORD_BYTES - c->have, 0);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    if (n <= 0)
        fail("reading a connection's hello: %s", n == 0 ? "end of stream" : strerror(errno));
    c->have += (size_t)n;
    if (c->have < RECORD_BYTES)
        return;
    uint64_t word = le64(c->buf), index = word & ~HELLO_TAG;
    if (!(word & HELLO_TAG) || index >= (uint64_t)connections)
        fail("a connection's first record is %#" PRIx64 ", not a hello of one of %" PRId64
             " connections", word, connections);
    if (conns[index])
        fail("two connections said hello as connection %" PRIu64, index);
    ev_io_stop(l, io);
    c->slot = (int64_t)index;
    c->have = 0;
    c->reads = malloc((keepalives[index] ? keepalives[index] : 1) * sizeof *c->reads);
    conns[index] = c;
    if (++identified == connections) {
        ev_io_stop(l, &listener);
        close(listen_fd);
        printf("ready\n");
        fflush(stdout);
        pthread_t thread;
        if (pthread_create(&thread, NULL, read_words, NULL) != 0)
            fail("cannot start the thread that reads stdin");
        pthread_detach(thread);
    }
}

static void on_connection(struct ev_loop *l, ev_io *io, int revents) {
    (void)io, (void)revents;
    for (;;) {
        int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ||
                errno == ECONNABORTED)
                return;
            fail("accepting a connection: %s", strerror(errno));
        }
        conn_t *c = calloc(1, sizeof *c);
        c->fd = fd, c->slot = -1, c->deadline = -1;
        ev_init(&c->timer, on_timer);
        c->timer.data = c;
        ev_io_init(&c->io, on_hello, fd, EV_READ);
        ev_io_start(l, &c->io);
    }
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
    for (int64_t i = 0; i < connections; i++) {
        conn_t *c = conns[i];
        if (fill_ticks[i] >= 0)
            activity(c, origin + fill_ticks[i] * tick_ns);
        ev_io_init(&c->io, on_readable, c->fd, EV_READ);
        ev_io_start(evloop, &c->io);
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
    ev_async_stop(evloop, &words_async);
}

static void on_words(struct ev_loop *l, ev_async *async, int revents) {
    (void)l, (void)async, (void)revents;
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

/* The name of the loop's backend (ev_backend: one EVBACKEND_* bit), as libev names them. */
static const char *backend_name(unsigned int backend) {
    static const char *const names[] = {"select", "poll",    "epoll",    "kqueue",
                                        "devpoll", "port",   "linuxaio", "iouring"};
    for (unsigned int bit = 0; bit < sizeof names / sizeof *names; bit++)
        if (backend == 1u << bit)
            return names[bit];
    return "unknown";
}

static const char *const SERVER_TIMER_AGAIN =
    "one libev loop; an ev_io per connection and an ev_timer per connection, libev's manual's "
    "strategy 2 of \"Be smart about timeouts\" (re-start it with ev_timer_again): its repeat "
    "is the timeout plus the loop clock's lag (ev_time () - ev_now ()), and every keepalive "
    "calls ev_timer_again, which moves the timer in the loop's heap";
static const char *const SERVER_LAZY =
    "one libev loop; an ev_io per connection and an ev_timer per connection, libev's manual's "
    "strategy 3 of \"Be smart about timeouts\" (let the timer time out, but then re-arm it as "
    "required): a keepalive only records its deadline; a one-shot timer that fires before the "
    "deadline is started again for the rest (not counted in rearmed), one that finds it "
    "passed is the timeout";

/* Every keepalive read and every connection's end, for timerbench to check; the usage. */
static void answer(window_t idle) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("result {\"runtime\":\"libev\",\"runtime_version\":\"%d.%d\",", ev_version_major(),
           ev_version_minor());
    printf("\"runtime_flags\":[\"strategy=%s\",\"backend=%s\"],\"reads\":[",
           strategy == TIMER_AGAIN ? "timer-again" : "lazy", backend_name(ev_backend(evloop)));
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
    json_string(strategy == TIMER_AGAIN ? SERVER_TIMER_AGAIN : SERVER_LAZY);
    printf(",\"cpu_of\":");
    json_string("the whole server process (getrusage RUSAGE_SELF, user + system), between "
                "the phase's ends as the process itself read them");
    printf(",\"wakeups_of\":");
    json_string("not counted: libev counts no waits of its loop; the process's voluntary "
                "context switches (the loop blocking, then woken) are in voluntary_switches");
    printf("}\n");
    fflush(stdout);
}

/* Listens on 127.0.0.1:port, non-blocking; says the port. */
static void listen_on(void) {
    listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (listen_fd < 0 || setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
        bind(listen_fd, (struct sockaddr *)&address, sizeof address) ||
        listen(listen_fd, SOMAXCONN))
        fail("cannot listen on 127.0.0.1:%" PRId64
             " (%s); choose another --port, or 0 for any free one",
             port, strerror(errno));
    socklen_t length = sizeof address;
    getsockname(listen_fd, (struct sockaddr *)&address, &length);
    printf("listening %d\n", ntohs(address.sin_port));
    fflush(stdout);
}

int main(int argc, char **argv) {
    strategy = argc > 1 && !strcmp(argv[1], "libev-timer-again") ? TIMER_AGAIN
               : argc > 1 && !strcmp(argv[1], "libev-lazy")      ? LAZY
                                                                 : 0;
    if (!strategy)
        fail("usage: libev-keepalive libev-timer-again|libev-lazy live-tcp key=value...");
    if (argc < 3 || strcmp(argv[2], "live-tcp") != 0)
        fail("the libev engine has only the `live-tcp` mode (a live keepalive server)");
    set_up(argc - 3, argv + 3);
    evloop = ev_default_loop(EVFLAG_AUTO);
    if (!evloop)
        fail("cannot start libev's default loop");
    listen_on();
    ev_io_init(&listener, on_connection, listen_fd, EV_READ);
    ev_io_start(evloop, &listener);
    ev_async_init(&words_async, on_words);
    ev_async_start(evloop, &words_async);
    /* Runs until no watcher is active: the listener stops once all said hello, the
     * connections' watchers at their close, the async at the end. */
    ev_run(evloop, 0);
    window_t done = since(workload);
    window_t idle = usage_now();
    struct timespec ts = {idle_ns / 1000000000, idle_ns % 1000000000};
    nanosleep(&ts, NULL);
    workload = done;
    answer(since(idle));
    return 0;
}
