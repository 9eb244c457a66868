// A load generator for POST /plants that is not the bottleneck (issue 20, item 5): one
// thread, epoll, non-blocking sockets. A Node.js client on one core saturates at about
// 6,600 requests/s with a p99 of 2 s against a server that answers at once (issue 20), so
// it cannot judge a service that takes more than that. Built by the test that uses it
// (test/support/reliability/load-generator.ts); nothing binary is committed.
//
//   load-generator open   --port P --token T --rate R --duration-ms D [options]
//   load-generator closed --port P --token T --connections N --duration-ms D [options]
//
// open: request i is due at t0 + i/R and goes out then, whether or not earlier ones were
// answered, on an idle keep-alive connection if one is free, else on a new connection (up
// to --max-connections; past it, it waits for one). Its latency counts from when it was
// due, so a server that stalls pays for every request that arrived meanwhile (no
// coordinated omission). closed: N connections, each sending its next request as soon as
// the previous one is answered, for measuring capacity.
//
// Options: --host (127.0.0.1), --path (/plants), --timeout-ms (10000: a request with no
// answer that long after it was due is unanswered, and its connection closed),
// --max-connections (8192), --preopen (0: connections opened, and answered a GET
// /health/live each, before the clock starts, as a client's pool or a balancer's holds
// them), --first-id (1: ids are first-id, first-id + 1, ...),
// --outcomes FILE (one line per request: id due_ms lateness_ms status retry_after
// latency_ms outcome). Prints a JSON summary on stdout.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum outcome { PENDING, ANSWERED, UNANSWERED, RESET, CLOSED, CONNECT_FAILED };
static const char *outcome_names[] = {"pending", "answered", "unanswered",
                                      "reset",   "closed",   "connect-failed"};

typedef struct {
  int64_t due_ns;  // from t0
  int64_t sent_ns; // when the generator dispatched it (closed loop: sent); -1 before
  int64_t done_ns; // when its outcome was known; -1 before
  int16_t status;
  uint8_t retry_after; // the answer carried a Retry-After header
  uint8_t outcome;
} request_t;

enum conn_state { CONNECTING, IDLE, BUSY };

typedef struct {
  int fd;
  int state;
  int probe;   // carries the --preopen probe, not a request
  int64_t req; // the request it carries, -1 when none
  char wbuf[1024];
  int wlen, woff;
  char rbuf[16384];
  int rlen;
} conn_t;

static struct {
  const char *host, *path, *token, *outcomes;
  int port, open_mode, connections, max_connections, preopen;
  double rate;
  int64_t duration_ns, timeout_ns;
  long long first_id;
} opt = {"127.0.0.1", "/plants", NULL, NULL, 0, 1, 64, 8192, 0, 0, 0, 10000000000LL, 1};
static int probes_left; // preopened connections whose probe is not answered yet

static request_t *reqs;
static int64_t nreqs, reqs_cap, settled;
static conn_t **conns; // by fd
static int conns_size;
static int *idle;
static int nidle;
static int64_t *waiting; // due requests waiting for a connection (at the cap), a FIFO
static int64_t waiting_head, waiting_tail, waiting_cap;
static int epfd, open_now, peak_open;
static long long opened;
static struct sockaddr_in addr;
static int64_t t0;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec - t0;
}

static void die(const char *what) {
  fprintf(stderr, "load-generator: %s: %s\n", what, strerror(errno));
  exit(2);
}

static int64_t new_request(int64_t due_ns) {
  if (nreqs == reqs_cap) {
    reqs_cap = reqs_cap ? reqs_cap * 2 : 65536;
    reqs = realloc(reqs, reqs_cap * sizeof *reqs);
    if (!reqs) die("realloc");
  }
  reqs[nreqs] = (request_t){due_ns, -1, -1, 0, 0, PENDING};
  return nreqs++;
}

static void settle(int64_t r, int outcome, int status, int retry_after) {
  request_t *q = &reqs[r];
  if (q->outcome != PENDING) return;
  q->outcome = outcome;
  q->status = status;
  q->retry_after = retry_after;
  q->done_ns = now_ns();
  settled++;
}

static void close_conn(conn_t *c) {
  epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
  close(c->fd);
  if (c->state == IDLE)
    for (int i = 0; i < nidle; i++)
      if (idle[i] == c->fd) {
        idle[i] = idle[--nidle];
        break;
      }
  conns[c->fd] = NULL;
  open_now--;
  free(c);
}

static void watch(conn_t *c, uint32_t events) {
  struct epoll_event ev = {.events = events, .data.fd = c->fd};
  if (epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev) < 0) die("epoll_ctl MOD");
}

static void flush(conn_t *c) {
  while (c->woff < c->wlen) {
    ssize_t n = write(c->fd, c->wbuf + c->woff, c->wlen - c->woff);
    if (n < 0) {
      if (errno == EAGAIN) break;
      if (c->probe) probes_left--;
      else settle(c->req, errno == ECONNRESET || errno == EPIPE ? RESET : CLOSED, 0, 0);
      close_conn(c);
      return;
    }
    c->woff += n;
  }
  watch(c, c->woff < c->wlen ? EPOLLIN | EPOLLOUT : EPOLLIN);
}

// GET /health/live on a connection opened before the clock starts: answered, the
// connection is known to be taken by the server, and then idle.
static void put_probe(conn_t *c) {
  c->wlen = snprintf(c->wbuf, sizeof c->wbuf, "GET /health/live HTTP/1.1\r\nHost: %s:%d\r\n\r\n",
                     opt.host, opt.port);
  c->woff = 0;
  c->rlen = 0;
  c->req = -1;
  c->probe = 1;
}

static void put_request(conn_t *c, int64_t r) {
  char body[160];
  long long id = opt.first_id + r;
  int blen = snprintf(body, sizeof body,
                      "{\"id\": %lld, \"name\": \"Plant %lld\", \"tag\": \"load\"}", id, id);
  c->wlen = snprintf(c->wbuf, sizeof c->wbuf,
                     "POST %s HTTP/1.1\r\nHost: %s:%d\r\nAuthorization: Bearer %s\r\n"
                     "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
                     opt.path, opt.host, opt.port, opt.token, blen, body);
  c->woff = 0;
  c->rlen = 0;
  c->req = r;
  if (reqs[r].sent_ns < 0) reqs[r].sent_ns = now_ns();
  if (c->state == IDLE) {
    c->state = BUSY;
    flush(c);
  }
}

// A new connection carrying request r (or, with r < 0, the preopen probe).
static void open_conn(int64_t r) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0 || fd >= conns_size) {
    if (fd >= 0) close(fd);
    if (r < 0) die("socket");
    reqs[r].sent_ns = now_ns();
    settle(r, CONNECT_FAILED, 0, 0);
    return;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  conn_t *c = calloc(1, sizeof *c);
  if (!c) die("calloc");
  c->fd = fd;
  c->state = CONNECTING;
  conns[fd] = c;
  opened++;
  if (++open_now > peak_open) peak_open = open_now;
  struct epoll_event ev = {.events = EPOLLOUT, .data.fd = fd};
  if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0) die("epoll_ctl ADD");
  if (r < 0) put_probe(c);
  else put_request(c, r);
  if (connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0 && errno != EINPROGRESS) {
    if (r < 0) die("connect");
    settle(r, CONNECT_FAILED, 0, 0);
    close_conn(c);
  }
}

// A request that is due: on an idle connection, a new one, or in line for one.
static void dispatch(int64_t r) {
  // The generator's own lateness: when it got to the request, whether a connection was
  // free then or not (a request waiting for one at the cap is the client's queue).
  reqs[r].sent_ns = now_ns();
  if (nidle > 0) {
    put_request(conns[idle[--nidle]], r);
  } else if (open_now < opt.max_connections) {
    open_conn(r);
  } else {
    waiting[waiting_tail++ % waiting_cap] = r;
  }
}

static int sending_closed_loop(void) { return !opt.open_mode && now_ns() < opt.duration_ns; }

// A connection free again: the next waiting request, a new one (closed loop), or idle.
static void release(conn_t *c) {
  c->req = -1;
  c->state = IDLE;
  while (waiting_head < waiting_tail) {
    int64_t r = waiting[waiting_head++ % waiting_cap];
    if (reqs[r].outcome == PENDING) {
      put_request(c, r);
      return;
    }
  }
  if (sending_closed_loop()) {
    put_request(c, new_request(now_ns()));
    return;
  }
  idle[nidle++] = c->fd;
  watch(c, EPOLLIN);
}

// The value of header `name` in the head [start, end), or NULL.
static const char *header(const char *head, const char *end, const char *name, int *len) {
  size_t n = strlen(name);
  for (const char *p = strstr(head, "\r\n"); p && p + 2 < end; p = strstr(p + 2, "\r\n")) {
    const char *line = p + 2;
    if (strncasecmp(line, name, n) == 0 && line[n] == ':') {
      const char *v = line + n + 1;
      while (*v == ' ') v++;
      const char *e = strstr(v, "\r\n");
      *len = (int)(e - v);
      return v;
    }
  }
  return NULL;
}

static void on_readable(conn_t *c) {
  for (;;) {
    ssize_t n = read(c->fd, c->rbuf + c->rlen, sizeof c->rbuf - 1 - c->rlen);
    if (n < 0 && errno == EAGAIN) return;
    if (n <= 0) {
      // Closed (or reset) by the server: an answer cut short, or an idle connection let go.
      if (c->req >= 0) settle(c->req, n < 0 ? RESET : CLOSED, 0, 0);
      if (c->probe) probes_left--;
      close_conn(c);
      return;
    }
    if (c->req < 0 && !c->probe) { // bytes nobody asked for
      close_conn(c);
      return;
    }
    c->rlen += n;
    c->rbuf[c->rlen] = 0;
    char *end = strstr(c->rbuf, "\r\n\r\n");
    if (!end) {
      if (c->rlen == sizeof c->rbuf - 1) {
        if (c->probe) probes_left--;
        else settle(c->req, CLOSED, 0, 0);
        close_conn(c);
        return;
      }
      continue;
    }
    int len;
    const char *v = header(c->rbuf, end + 2, "content-length", &len);
    long body = v ? strtol(v, NULL, 10) : 0;
    if (c->rlen < end + 4 - c->rbuf + body) continue;
    v = header(c->rbuf, end + 2, "connection", &len);
    int closing = v && len == 5 && strncasecmp(v, "close", 5) == 0;
    if (c->probe) {
      // A probe answered on a connection the server then closes (one past its cap) leaves
      // no connection to hold.
      c->probe = 0;
      probes_left--;
      if (closing) {
        close_conn(c);
      } else {
        c->state = IDLE;
        idle[nidle++] = c->fd;
        watch(c, EPOLLIN);
      }
      return;
    }
    int status = atoi(c->rbuf + 9);
    int retry = header(c->rbuf, end + 2, "retry-after", &len) != NULL;
    settle(c->req, ANSWERED, status, retry);
    if (!closing) {
      release(c);
    } else {
      close_conn(c);
      // A closed loop keeps its number of clients.
      if (sending_closed_loop()) open_conn(new_request(now_ns()));
    }
    return;
  }
}

static void on_event(int fd, uint32_t events) {
  conn_t *c = conns[fd];
  if (!c) return;
  if (c->state == CONNECTING) {
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err) {
      if (c->probe) probes_left--;
      else settle(c->req, CONNECT_FAILED, 0, 0);
      close_conn(c);
      return;
    }
    c->state = BUSY;
    flush(c);
    return;
  }
  if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) on_readable(c);
  else if (events & EPOLLOUT) flush(c);
}

// Requests past the timeout: unanswered, and their connections closed.
static void expire(int64_t now) {
  for (int fd = 0; fd < conns_size; fd++) {
    conn_t *c = conns[fd];
    if (c && c->req >= 0 && now - reqs[c->req].due_ns >= opt.timeout_ns) {
      settle(c->req, UNANSWERED, 0, 0);
      close_conn(c);
    }
  }
  for (int64_t i = waiting_head; i < waiting_tail; i++) {
    int64_t r = waiting[i % waiting_cap];
    if (now - reqs[r].due_ns >= opt.timeout_ns) settle(r, UNANSWERED, 0, 0);
  }
}

static void parse(int argc, char **argv) {
  if (argc < 2) goto usage;
  if (strcmp(argv[1], "open") == 0) opt.open_mode = 1;
  else if (strcmp(argv[1], "closed") == 0) opt.open_mode = 0;
  else goto usage;
  for (int i = 2; i + 1 < argc; i += 2) {
    const char *k = argv[i], *v = argv[i + 1];
    if (!strcmp(k, "--host")) opt.host = v;
    else if (!strcmp(k, "--port")) opt.port = atoi(v);
    else if (!strcmp(k, "--path")) opt.path = v;
    else if (!strcmp(k, "--token")) opt.token = v;
    else if (!strcmp(k, "--rate")) opt.rate = atof(v);
    else if (!strcmp(k, "--connections")) opt.connections = atoi(v);
    else if (!strcmp(k, "--max-connections")) opt.max_connections = atoi(v);
    else if (!strcmp(k, "--duration-ms")) opt.duration_ns = atoll(v) * 1000000LL;
    else if (!strcmp(k, "--timeout-ms")) opt.timeout_ns = atoll(v) * 1000000LL;
    else if (!strcmp(k, "--first-id")) opt.first_id = atoll(v);
    else if (!strcmp(k, "--preopen")) opt.preopen = atoi(v);
    else if (!strcmp(k, "--outcomes")) opt.outcomes = v;
    else goto usage;
  }
  if (opt.port > 0 && opt.token && opt.duration_ns > 0 && (!opt.open_mode || opt.rate > 0))
    return;
usage:
  fprintf(stderr, "usage: load-generator open|closed --port P --token T --duration-ms D "
                  "(--rate R | --connections N) [--host H] [--path P] [--timeout-ms T] "
                  "[--max-connections C] [--preopen N] [--first-id I] [--outcomes FILE]\n");
  exit(2);
}

int main(int argc, char **argv) {
  parse(argc, argv);
  int wanted = opt.open_mode ? opt.max_connections : opt.connections;
  // Every connection is a descriptor: the soft limit is raised to the hard one, and a hard
  // limit too low for the cap is an error, not a quiet ceiling on the load.
  struct rlimit rl;
  getrlimit(RLIMIT_NOFILE, &rl);
  rl.rlim_cur = rl.rlim_max;
  setrlimit(RLIMIT_NOFILE, &rl);
  if (rl.rlim_cur < (rlim_t)wanted + 64) {
    fprintf(stderr,
            "load-generator: %d connections need %d descriptors, the hard limit is %llu "
            "(ulimit -Hn)\n",
            wanted, wanted + 64, (unsigned long long)rl.rlim_cur);
    exit(2);
  }
  conns_size = wanted + 64;
  conns = calloc(conns_size, sizeof *conns);
  idle = calloc(conns_size, sizeof *idle);
  addr.sin_family = AF_INET;
  addr.sin_port = htons(opt.port);
  if (inet_pton(AF_INET, opt.host, &addr.sin_addr) != 1) {
    fprintf(stderr, "load-generator: --host must be an IPv4 address\n");
    exit(2);
  }
  epfd = epoll_create1(EPOLL_CLOEXEC);
  if (epfd < 0) die("epoll_create1");

  int64_t planned = opt.open_mode ? (int64_t)(opt.rate * opt.duration_ns / 1e9) : 0;
  waiting_cap = planned > 0 ? planned : 1;
  waiting = malloc(waiting_cap * sizeof *waiting);
  struct epoll_event events[512];
  // The pool a client holds before the load starts (--preopen), each connection probed so
  // the server has taken it: opening them is not part of any figure.
  t0 = 0;
  t0 = now_ns();
  for (int i = 0; i < opt.preopen && i < wanted; i++) {
    probes_left++;
    open_conn(-1);
  }
  while (probes_left > 0) {
    int n = epoll_wait(epfd, events, 512, 100);
    if (n < 0 && errno != EINTR) die("epoll_wait");
    for (int i = 0; i < n; i++) on_event(events[i].data.fd, events[i].events);
    if (now_ns() > opt.timeout_ns) {
      fprintf(stderr, "load-generator: %d of %d preopened connections unanswered\n", probes_left,
              opt.preopen);
      exit(2);
    }
  }
  double interval_ns = opt.open_mode ? 1e9 / opt.rate : 0;
  int64_t next = 0; // the next open-loop request to fall due
  t0 = 0;
  t0 = now_ns();
  if (!opt.open_mode)
    for (int i = 0; i < opt.connections; i++) {
      if (nidle > 0) put_request(conns[idle[--nidle]], new_request(0));
      else open_conn(new_request(0));
    }
  else
    for (int64_t i = 0; i < planned; i++) new_request((int64_t)(i * interval_ns));

  int64_t last_expiry = 0;
  for (;;) {
    int64_t now = now_ns();
    // A few at a time, with the answers that arrived meanwhile read in between: behind
    // schedule, a burst dispatched at once would find every connection busy and open new
    // ones for requests that connections freed a moment later could carry.
    for (int burst = 0; burst < 32 && next < planned && reqs[next].due_ns <= now; burst++)
      dispatch(next++);
    if (now - last_expiry >= 50000000LL) {
      expire(now);
      last_expiry = now;
    }
    int sending = next < planned || sending_closed_loop();
    if (!sending && settled == nreqs) break;
    // Sleeps to the next due time (never spins: the other processes need the CPU), or to
    // the next timeout scan.
    int64_t wait = 50000000LL;
    if (next < planned && reqs[next].due_ns - now < wait) wait = reqs[next].due_ns - now;
    if (wait < 0) wait = 0;
    struct timespec ts = {wait / 1000000000LL, wait % 1000000000LL};
    int n = epoll_pwait2(epfd, events, 512, &ts, NULL);
    if (n < 0 && errno != EINTR) die("epoll_pwait2");
    for (int i = 0; i < n; i++) on_event(events[i].data.fd, events[i].events);
  }
  int64_t finished = now_ns();

  long long counts[6] = {0}, ok = 0, ok_in_window = 0, refused = 0, refused_without_retry = 0,
            other_status = 0;
  int64_t last_sent = 0, max_lateness = 0;
  FILE *out = opt.outcomes ? fopen(opt.outcomes, "w") : NULL;
  if (opt.outcomes && !out) die(opt.outcomes);
  for (int64_t i = 0; i < nreqs; i++) {
    request_t *q = &reqs[i];
    counts[q->outcome]++;
    if (q->sent_ns > last_sent) last_sent = q->sent_ns;
    int64_t lateness = q->sent_ns >= 0 ? q->sent_ns - q->due_ns : -1;
    if (lateness > max_lateness) max_lateness = lateness;
    if (q->outcome == ANSWERED) {
      if (q->status == 200) {
        ok++;
        if (q->done_ns <= opt.duration_ns) ok_in_window++;
      } else if (q->status == 503) {
        refused++;
        if (!q->retry_after) refused_without_retry++;
      } else {
        other_status++;
      }
    }
    if (out)
      fprintf(out, "%lld %.3f %.3f %d %d %.3f %s\n", opt.first_id + i, q->due_ns / 1e6,
              lateness / 1e6, q->status, q->retry_after,
              q->done_ns >= 0 ? (q->done_ns - q->due_ns) / 1e6 : -1.0,
              outcome_names[q->outcome]);
  }
  if (out) fclose(out);
  printf("{\"mode\": \"%s\", \"requests\": %lld, \"answered\": %lld, \"ok\": %lld, "
         "\"okInWindow\": %lld, \"refused\": %lld, \"refusedWithoutRetryAfter\": %lld, "
         "\"otherStatus\": %lld, \"unanswered\": %lld, \"reset\": %lld, \"closed\": %lld, "
         "\"connectFailed\": %lld, \"connectionsOpened\": %lld, \"peakConnections\": %d, "
         "\"durationMs\": %.3f, \"lastSentMs\": %.3f, \"maxLatenessMs\": %.3f, "
         "\"finishedMs\": %.3f}\n",
         opt.open_mode ? "open" : "closed", (long long)nreqs, counts[ANSWERED], ok,
         ok_in_window, refused, refused_without_retry, other_status, counts[UNANSWERED],
         counts[RESET], counts[CLOSED], counts[CONNECT_FAILED], opened, peak_open,
         opt.duration_ns / 1e6, last_sent / 1e6, max_lateness / 1e6, finished / 1e6);
  return 0;
}
