/**
 * The fast local webhook receiver of `npm run bench:webhooks`, in its own process so that it never
 * shares an event loop with the sender it measures. Every POST is answered 200 `success` at once;
 * for each one it records the arrival time (Date.now(), this machine's clock, 1 ms resolution) and
 * the `id`, kind and `created` of the event in the body. The benchmark reads them over routes of
 * its own (under /_bench/), which no sender ever calls:
 *
 *   GET  /_bench/stats     counts, distinct deliveries, first and last arrival
 *   GET  /_bench/records   every arrival and created time, and whether it was the endpoint_ kind
 *   GET  /_bench/sample    the body of the first endpoint_ delivery (the template of the bare sender)
 *   POST /_bench/reset     forgets everything
 *
 *   node --import tsx bench/receiver-server.ts <port>
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

const port = Number(process.argv[2]);
if (!Number.isInteger(port) || port <= 0) {
  process.stderr.write('usage: receiver-server.ts <port>\n');
  process.exit(1);
}

/** Arrival and created times in ms since the epoch, in growable typed arrays (a run sends ~10^5). */
class Column {
  values = new Float64Array(1 << 15);
  length = 0;
  add(value: number): void {
    if (this.length === this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.length++] = value;
  }
  list(): number[] {
    return Array.from(this.values.subarray(0, this.length));
  }
}

let arrivals = new Column();
let created = new Column();
let endpointKind = new Column();
let seen = new Set<string>();
let duplicates = 0;
let unparsed = 0;
let byPath = new Map<string, number>();
let sample: { path: string; body: string } | null = null;

// The event body begins {"id":"evt_…","apiVersion":"v1","type":"…","created":"…", (canonical JSON,
// docs/webhooks.md#what-is-sent): read from its first bytes without parsing the rest.
const head = /^\{"id":"([^"]+)","apiVersion":"v1","type":"([^"]+)","created":"([^"]+)"/;

function record(path: string, body: string, arrivedAtMs: number): void {
  byPath.set(path, (byPath.get(path) ?? 0) + 1);
  const match = head.exec(body.slice(0, 256));
  if (!match) {
    unparsed += 1;
    return;
  }
  const isEndpointKind = match[2]!.startsWith('endpoint_');
  const key = `${match[1]}|${isEndpointKind ? 'e' : 'l'}|${path}`;
  if (seen.has(key)) duplicates += 1;
  else seen.add(key);
  arrivals.add(arrivedAtMs);
  created.add(Date.parse(match[3]!));
  endpointKind.add(isEndpointKind ? 1 : 0);
  if (isEndpointKind && sample === null) sample = { path, body };
}

function benchRoute(req: IncomingMessage, res: ServerResponse): void {
  const json = (value: unknown) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(value));
  };
  switch (`${req.method} ${req.url}`) {
    case 'GET /_bench/stats':
      return json({
        requests: arrivals.length + unparsed,
        distinct: seen.size,
        duplicates,
        unparsed,
        firstArrivalMs: arrivals.length ? arrivals.values[0] : null,
        lastArrivalMs: arrivals.length ? arrivals.values[arrivals.length - 1] : null,
        byPath: Object.fromEntries(byPath),
      });
    case 'GET /_bench/records':
      return json({ arrivalMs: arrivals.list(), createdMs: created.list(), endpointKind: endpointKind.list() });
    case 'GET /_bench/sample':
      return json(sample);
    case 'POST /_bench/reset':
      arrivals = new Column();
      created = new Column();
      endpointKind = new Column();
      seen = new Set();
      duplicates = 0;
      unparsed = 0;
      byPath = new Map();
      sample = null;
      return json({ reset: true });
    default:
      res.writeHead(404).end();
  }
}

const server = createServer((req, res) => {
  if (req.url === '/health') {
    res.writeHead(200).end('ok');
    return;
  }
  if (req.url?.startsWith('/_bench/')) {
    req.resume();
    req.on('end', () => benchRoute(req, res));
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const arrivedAtMs = Date.now();
    record(req.url ?? '', Buffer.concat(chunks).toString('utf8'), arrivedAtMs);
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('success');
  });
});
// Longer than the senders' idle connections live, so that no run pays for reconnecting.
server.keepAliveTimeout = 60_000;
server.listen(port, '127.0.0.1', () => process.stdout.write(`receiver listening on 127.0.0.1:${port}\n`));

const stop = () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
