// The floor under any refusal made through Node's HTTP server: node:http answering every
// request with the service's overload 503 (the same body and headers), and nothing else.
// GET /health answers 200, so startServer (bench/lib/servers.mjs) can tell it is up.
// Environment: PORT, HOST.
import http from 'node:http';

const body = JSON.stringify({
  error: 503,
  message: 'The service is overloaded; retry later.',
});
const headers = {
  'Retry-After': '2',
  'Content-Type': 'application/json; charset=utf-8',
  'Content-Length': Buffer.byteLength(body),
};

http
  .createServer((request, response) => {
    if (request.method === 'GET' && request.url === '/health') {
      response.end('ok');
      return;
    }
    response.writeHead(503, headers);
    response.end(body);
  })
  .listen(Number(process.env.PORT), process.env.HOST ?? '127.0.0.1');
