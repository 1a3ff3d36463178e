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
): Promise<DestinationStream> {
  // Loaded only for a terminal: a service that writes JSON lines (production, tests, any pipe)
  // does not pay for its import at every start (docs/performance.md#test-suite-time).
  const { prettyFactory } = await import('pino-pretty');
  const format = prettyFactory({ colorize, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });
  return { write: (line: string) => output.write(format(line)) };
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
