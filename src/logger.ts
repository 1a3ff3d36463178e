import pino, { type DestinationStream, type Logger } from 'pino';
import { redactLogFields, redactUrl } from './redact.js';

/**
 * One logger for the service. Request bodies are never logged; the redaction below is a second
 * line of defence so that a card number or key that reaches a log object anyway is masked.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      redact: {
        paths: [
          'req.headers.authorization',
          'headers.authorization',
          '*.cardNo',
          '*.securityCode',
          '*.*.cardNo',
          '*.*.securityCode',
          'body',
          '*.body',
        ],
        censor: '[redacted]',
      },
      // Every field whose name is a secret's is masked, whoever logs it (src/redact.ts).
      formatters: { log: redactLogFields },
      // Fastify logs each request's URL, which can hold a card number sent in the path or the
      // secret of a 3-D Secure or hosted invoice link: both are masked before the line is written.
      serializers: { req: serializeRequest },
    },
    destination,
  );
}

/**
 * A destination that writes each line readably (time, level, message, then the fields) for a
 * terminal. It formats the line pino has already redacted, so the masking above holds here too,
 * and it writes synchronously, so the lines stay in order with what the command prints itself.
 */
export async function prettyDestination(
  colorize: boolean,
  output: { write(text: string): unknown } = process.stdout,
  { requestDetail = true }: { requestDetail?: boolean } = {},
): Promise<DestinationStream> {
  // Loaded only for a terminal: a service that writes JSON lines (production, tests, any pipe)
  // does not pay for its import at every start (docs/performance.md#test-suite-time).
  const { prettyFactory } = await import('pino-pretty');
  const format = prettyFactory({ colorize, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });
  if (requestDetail) return { write: (line: string) => output.write(format(line)) };
  const compact = compactRequests();
  return {
    write: (line: string) => {
      const written = compact(line);
      if (written !== undefined) output.write(format(written));
    },
  };
}

/** Requests whose "incoming request" line was seen, by trace id: their method and URL. */
const maxOpenRequests = 1000;

/**
 * For a person at a terminal (docs/cli.md, "The development loop"): one line per request, "POST /path →
 * 200 in 12 ms", instead of Fastify's two entries of some 16 lines together, which scrolled the
 * banner's key and sign-in link away. The "incoming request" entry is held back (undefined) and
 * its method and URL, already redacted, go into the "request completed" line; every other line
 * passes as it is. `TESSERA_LOG_LEVEL=debug` keeps the full detail.
 */
function compactRequests(): (line: string) => string | undefined {
  const open = new Map<string, string>();
  return (line) => {
    if (!line.includes('"msg":"incoming request"') && !line.includes('"msg":"request completed"')) return line;
    const entry = JSON.parse(line) as {
      msg: string;
      traceId?: string;
      req?: { method?: string; url?: string };
      res?: { statusCode?: number };
      responseTime?: number;
    };
    if (entry.traceId === undefined) return line;
    if (entry.msg === 'incoming request') {
      if (open.size >= maxOpenRequests) open.delete(open.keys().next().value!);
      open.set(entry.traceId, `${entry.req?.method} ${entry.req?.url}`);
      return undefined;
    }
    const request = open.get(entry.traceId);
    if (request === undefined) return line;
    open.delete(entry.traceId);
    const { req: _req, res: _res, responseTime: _time, traceId, msg: _msg, ...rest } = entry;
    const took = entry.responseTime === undefined ? '' : ` in ${Math.round(entry.responseTime)} ms`;
    return JSON.stringify({ ...rest, msg: `${request} → ${entry.res?.statusCode}${took} (${traceId})` });
  };
}

interface LoggedRequest {
  method?: string;
  url?: string;
  host?: string;
  ip?: string;
  headers?: Record<string, unknown>;
  socket?: { remoteAddress?: string; remotePort?: number };
}

/** Fastify's own request serializer, with the URL redacted. */
function serializeRequest(request: LoggedRequest) {
  return {
    method: request.method,
    url: typeof request.url === 'string' ? redactUrl(request.url) : undefined,
    host: request.host ?? request.headers?.host,
    remoteAddress: request.ip ?? request.socket?.remoteAddress,
    remotePort: request.socket?.remotePort,
  };
}
