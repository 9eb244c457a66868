// Real HTTP clients uploading a body, each as its users call it: Node's fetch (undici) and
// node:http, with a body of known length and a chunked one, and curl. Each resolves with the
// answer it read, or rejects with what the client saw instead (EPIPE, ECONNRESET...).
import { execFile } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Upload {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: Buffer;
}

export interface ReadAnswer {
  status: number;
  connection: string | undefined;
  body: unknown;
}

export type UploadClient = (upload: Upload) => Promise<ReadAnswer>;

const CHUNK_BYTES = 64 * 1024;

function* chunksOf(body: Buffer): Generator<Buffer> {
  for (let start = 0; start < body.length; start += CHUNK_BYTES)
    yield body.subarray(start, start + CHUNK_BYTES);
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

async function fetchWith(
  { url, method, headers }: Upload,
  body: Buffer | ReadableStream<Uint8Array>,
): Promise<ReadAnswer> {
  const response = await fetch(url, {
    method,
    headers,
    body,
    duplex: 'half',
  } as RequestInit);
  return {
    status: response.status,
    connection: response.headers.get('connection') ?? undefined,
    body: parsed(await response.text()),
  };
}

const fetchSized: UploadClient = (upload) => fetchWith(upload, upload.body);

const fetchStreamed: UploadClient = (upload) => {
  const chunks = chunksOf(upload.body);
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = chunks.next();
      if (next.done === true) controller.close();
      else controller.enqueue(next.value);
    },
  });
  return fetchWith(upload, stream);
};

function viaNodeHttp(upload: Upload, chunked: boolean): Promise<ReadAnswer> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const request = httpRequest(upload.url, {
      method: upload.method,
      agent: false,
      headers: chunked
        ? upload.headers
        : { ...upload.headers, 'Content-Length': upload.body.length },
    });
    request.on('response', (response) => {
      const parts: Buffer[] = [];
      response.on('data', (part: Buffer) => parts.push(part));
      response.on('end', () => {
        answered = true;
        resolve({
          status: response.statusCode ?? 0,
          connection: response.headers.connection,
          body: parsed(Buffer.concat(parts).toString('utf8')),
        });
      });
      response.on('error', reject);
    });
    // After the whole answer was read, the end of the upload is the client's own business.
    request.on('error', (error) => {
      if (!answered) reject(error);
    });
    if (!chunked) {
      request.end(upload.body);
      return;
    }
    const chunks = chunksOf(upload.body);
    const writeMore = (): void => {
      for (const chunk of chunks) {
        if (request.destroyed) return;
        if (!request.write(chunk)) {
          request.once('drain', writeMore);
          return;
        }
      }
      request.end();
    };
    writeMore();
  });
}

const httpSized: UploadClient = (upload) => viaNodeHttp(upload, false);
const httpChunked: UploadClient = (upload) => viaNodeHttp(upload, true);

let bodyFiles = 0;
async function viaCurl(upload: Upload, chunked: boolean): Promise<ReadAnswer> {
  bodyFiles += 1;
  const file = join(tmpdir(), `upload-${process.pid}-${bodyFiles}.bin`);
  await writeFile(file, upload.body);
  const headers = Object.entries({
    ...upload.headers,
    ...(chunked ? { 'Transfer-Encoding': 'chunked' } : {}),
  }).flatMap(([name, value]) => ['-H', `${name}: ${value}`]);
  const args = [
    '--silent',
    '--show-error',
    '--include',
    '-X',
    upload.method,
    ...headers,
    '--data-binary',
    `@${file}`,
    upload.url,
  ];
  try {
    return await curlAnswer(args);
  } finally {
    await rm(file, { force: true });
  }
}

function curlAnswer(args: string[]): Promise<ReadAnswer> {
  return new Promise<ReadAnswer>((resolve, reject) => {
    execFile('curl', args, { encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error !== null) {
        reject(new Error(`curl: ${stderr.trim() || error.message}`));
        return;
      }
      // With --include a `100 Continue` head, when sent, comes before the answer's.
      const answer = stdout.replace(/^HTTP\/1\.1 100[^\r]*\r\n\r\n/, '');
      const [head, ...body] = answer.split('\r\n\r\n');
      const connection = /\r\nconnection: *([^\r]*)/i.exec(head)?.[1];
      resolve({
        status: Number(head.split(' ')[1]),
        connection,
        body: parsed(body.join('\r\n\r\n')),
      });
    });
  });
}

// curl sends `Expect: 100-continue` for a body this large, and waits for the answer.
const curlSized: UploadClient = (upload) => viaCurl(upload, false);
const curlChunked: UploadClient = (upload) => viaCurl(upload, true);

export const UPLOAD_CLIENTS: ReadonlyArray<readonly [string, UploadClient]> = [
  ['fetch, known length', fetchSized],
  ['fetch, streamed (chunked)', fetchStreamed],
  ['node:http, Content-Length', httpSized],
  ['node:http, chunked', httpChunked],
  ['curl, known length', curlSized],
  ['curl, chunked', curlChunked],
];
