/**
 * A real merchant webhook endpoint for tests: an HTTP server on 127.0.0.1 (port 0) that records
 * each request's raw headers and raw body and answers as the test tells it.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface ReceivedRequest {
  method: string;
  /** Path and query. */
  path: string;
  /** Header names and values exactly as on the wire, in order: [name, value, name, value, …]. */
  rawHeaders: string[];
  /** Lower-cased names, as Node gives them. */
  headers: IncomingMessage['headers'];
  /** The body bytes exactly as received. */
  rawBody: Buffer;
  /** The body as UTF-8 text. */
  body: string;
  /** The address the request's connection came from. */
  remoteAddress: string | undefined;
}

/** How to answer one request: a status and a body, after a delay or once `until` settles; or drop the connection. */
export type Answer =
  | { status?: number; body?: string; delayMs?: number; until?: Promise<unknown>; headers?: Record<string, string> }
  | { reset: true };

export type Responder = (request: ReceivedRequest) => Answer;

export interface Receiver {
  /** The receiver's URL for `path` (default /webhook). */
  url(path?: string): string;
  readonly requests: ReceivedRequest[];
  /** The most requests this receiver has been answering at once. */
  maxConcurrent(): number;
  /** Answers from now on; the default answers HTTP 200 `success`. */
  respond(responder: Responder): void;
  /** The value of a header by its name on the wire (exact case), or undefined. */
  rawHeader(request: ReceivedRequest, name: string): string | undefined;
  /** Waits until at least `count` requests have come (or throws after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

export const answerSuccess: Responder = () => ({ status: 200, body: 'success' });

export async function startReceiver(responder: Responder = answerSuccess): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const waiters: Array<() => void> = [];
  const sockets = new Set<Socket>();
  let answer = responder;
  let concurrent = 0;
  let maxConcurrent = 0;

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    concurrent++;
    maxConcurrent = Math.max(maxConcurrent, concurrent);
    let done = false;
    const finish = () => {
      if (!done) concurrent--;
      done = true;
    };
    res.on('close', finish);
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks);
      const received: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        rawHeaders: [...req.rawHeaders],
        headers: req.headers,
        rawBody,
        body: rawBody.toString('utf8'),
        remoteAddress: req.socket.remoteAddress,
      };
      requests.push(received);
      for (const wake of waiters.splice(0)) wake();
      const reply = answer(received);
      if ('reset' in reply) {
        req.socket.destroy();
        return;
      }
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(reply.status ?? 200, { 'content-type': 'text/plain; charset=utf-8', ...reply.headers });
        res.end(reply.body ?? 'success');
      };
      if (reply.until) void reply.until.finally(send);
      else if (reply.delayMs) setTimeout(send, reply.delayMs).unref();
      else send();
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: (path = '/webhook') => `http://127.0.0.1:${port}${path}`,
    requests,
    maxConcurrent: () => maxConcurrent,
    respond(next) {
      answer = next;
    },
    rawHeader(request, name) {
      for (let index = 0; index < request.rawHeaders.length; index += 2) {
        if (request.rawHeaders[index] === name) return request.rawHeaders[index + 1];
      }
      return undefined;
    },
    async waitFor(count, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      while (requests.length < count) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`expected ${count} webhook requests, got ${requests.length}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return requests;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A URL on 127.0.0.1 where nothing listens: connecting is refused. */
export async function refusingUrl(path = '/webhook'): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}${path}`;
}

/*
 * What the provider's PHP SDK does before verifying (docs/webhooks.md#what-is-sent):
 * json_encode(json_decode($body, true), JSON_UNESCAPED_SLASHES), written independently of
 * src/events/canonical-json.ts so that tests can compare the two. PHP escapes every non-ASCII
 * UTF-16 unit as \u with lower-case hex, escapes control characters, leaves '/' and DEL alone,
 * turns an empty object into an empty array, keeps integers, and prints floats in their shortest
 * round-trip form with an exponent below 1e-4 and from 1e15 up (php_gcvt, serialize_precision -1).
 */
export function phpReencode(json: string): string {
  return phpEncode(JSON.parse(json));
}

function phpEncode(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  // PHP keeps an integer that fits in 64 bits as written; JavaScript writes it back the same below 1e21.
  if (typeof value === 'number')
    return Number.isInteger(value) && Math.abs(value) < 2 ** 63 ? String(value) : phpFloat(value);
  if (typeof value === 'string') return phpString(value);
  if (Array.isArray(value)) return `[${value.map(phpEncode).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>);
  // An associative array decoded from {} is empty, and PHP encodes an empty array as [].
  if (entries.length === 0) return '[]';
  // PHP also encodes an array whose keys are 0, 1, 2, … as a list; event bodies have no such keys.
  return `{${entries.map(([key, child]) => `${phpString(key)}:${phpEncode(child)}`).join(',')}}`;
}

function phpString(text: string): string {
  let out = '"';
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    const char = text[index] ?? '';
    if (char === '"') out += '\\"';
    else if (char === '\\') out += '\\\\';
    else if (char === '\b') out += '\\b';
    else if (char === '\f') out += '\\f';
    else if (char === '\n') out += '\\n';
    else if (char === '\r') out += '\\r';
    else if (char === '\t') out += '\\t';
    else if (unit < 0x20 || unit > 0x7f) out += `\\u${unit.toString(16).padStart(4, '0')}`;
    else out += char;
  }
  return `${out}"`;
}

/** php_gcvt(value, 17, '.', 'e') in mode 0: the shortest digits, fixed or exponential notation. */
function phpFloat(value: number): string {
  if (value === 0) return Object.is(value, -0) ? '-0' : '0';
  const sign = value < 0 ? '-' : '';
  const [mantissa = '', exponentText = '0'] = Math.abs(value).toExponential().split('e');
  const digits = mantissa.replace('.', '');
  const decimalPoint = Number(exponentText) + 1; // value = 0.digits × 10^decimalPoint
  if (decimalPoint < -3 || decimalPoint > 17) {
    const exponent = decimalPoint - 1;
    const rest = digits.slice(1) || '0';
    return `${sign}${digits[0]}.${rest}e${exponent < 0 ? '-' : '+'}${Math.abs(exponent)}`;
  }
  if (decimalPoint <= 0) return `${sign}0.${'0'.repeat(-decimalPoint)}${digits}`;
  if (decimalPoint >= digits.length) return `${sign}${digits}${'0'.repeat(decimalPoint - digits.length)}`;
  return `${sign}${digits.slice(0, decimalPoint)}.${digits.slice(decimalPoint)}`;
}
