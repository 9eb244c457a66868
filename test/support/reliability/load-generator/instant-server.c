// A server that answers every request at once with a fixed 200 (issue 20, item 5): the
// overload scenario offers the load generator's rate to it first, to prove the generator
// delivers that rate on its core. One thread, epoll, keep-alive; it reads each request's
// head and Content-Length body and answers it, nothing else.
//
//   instant-server PORT      (listens on 127.0.0.1:PORT until killed)
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#define BUF 16384
static const char answer[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             "Content-Length: 2\r\n\r\n{}";

typedef struct {
  char buf[BUF];
  int len;
} conn_t;

static long body_length(const char *head, const char *end) {
  for (const char *p = strstr(head, "\r\n"); p && p < end; p = strstr(p + 2, "\r\n"))
    if (strncasecmp(p + 2, "content-length:", 15) == 0) return strtol(p + 17, NULL, 10);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: instant-server PORT\n");
    return 2;
  }
  struct rlimit rl;
  getrlimit(RLIMIT_NOFILE, &rl);
  rl.rlim_cur = rl.rlim_max;
  setrlimit(RLIMIT_NOFILE, &rl);
  int size = rl.rlim_cur > 65536 ? 65536 : (int)rl.rlim_cur;
  conn_t **conns = calloc(size, sizeof *conns);
  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;
  setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(atoi(argv[1]))};
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  if (bind(lfd, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(lfd, 4096) < 0) {
    perror("instant-server: listen");
    return 1;
  }
  int epfd = epoll_create1(0);
  struct epoll_event ev = {.events = EPOLLIN, .data.fd = lfd};
  epoll_ctl(epfd, EPOLL_CTL_ADD, lfd, &ev);
  printf("listening\n");
  fflush(stdout);
  struct epoll_event events[512];
  for (;;) {
    int n = epoll_wait(epfd, events, 512, -1);
    for (int i = 0; i < n; i++) {
      int fd = events[i].data.fd;
      if (fd == lfd) {
        int c;
        while ((c = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
          if (c >= size) {
            close(c);
            continue;
          }
          setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          conns[c] = calloc(1, sizeof(conn_t));
          struct epoll_event cev = {.events = EPOLLIN, .data.fd = c};
          epoll_ctl(epfd, EPOLL_CTL_ADD, c, &cev);
        }
        continue;
      }
      conn_t *c = conns[fd];
      ssize_t r = read(fd, c->buf + c->len, BUF - 1 - c->len);
      if (r < 0 && errno == EAGAIN) continue;
      if (r <= 0) {
        close(fd);
        free(c);
        conns[fd] = NULL;
        continue;
      }
      c->len += r;
      c->buf[c->len] = 0;
      // Every whole request in the buffer gets its answer (small writes to a socket with
      // an empty send buffer: they go out whole).
      for (;;) {
        char *end = strstr(c->buf, "\r\n\r\n");
        if (!end) break;
        long whole = end + 4 - c->buf + body_length(c->buf, end);
        if (c->len < whole) break;
        if (write(fd, answer, sizeof answer - 1) < 0) break;
        memmove(c->buf, c->buf + whole, c->len - whole);
        c->len -= whole;
        c->buf[c->len] = 0;
      }
    }
  }
}
