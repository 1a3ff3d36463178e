import { parseArgs } from 'node:util';
import { systemClock } from '../clock.js';
import { ConfigError } from '../config-rules.js';
import { loadClientConfig } from './client-config.js';
import { answerData, describeNetworkError, ServiceUnavailableError, unreachable } from './client.js';
import { cliEventCode } from './event-codes.js';
import { createReconnector } from './reconnect.js';
import { isoTimestamp } from '../time.js';
import { generateSecret } from '../webhooks/endpoints/secrets.js';
import { formatRequestTime, signWebhook } from '../webhooks/signature.js';

/**
 * `tessera listen` (issue 12): the merchant's events come from the service over server-sent events
 * (GET /events/stream, so the service only needs to be reachable from here, not the other way round)
 * and are forwarded to a local URL signed exactly as real deliveries are (docs/webhooks.md#what-is-sent), with a token
 * made for this session.
 */
export const listenUsage = `  listen --forward-to URL [--events a.b,c.d]
                                 forward the merchant's events as they happen to a local URL, signed
                                 as real deliveries with a session token printed at start; waits out a
                                 restart of the service and reconnects (events recorded meanwhile are
                                 not forwarded: tessera events list shows them)`;

const forwardTimeoutMs = 10_000;

interface StreamedEvent {
  id: string;
  type: string;
  body: string;
}

function parseEventFilter(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  return raw
    .split(',')
    .map((type) => cliEventCode('--events', type.trim()))
    .join(',');
}

function parseForwardUrl(raw: string | undefined): string {
  if (!raw) throw new ConfigError('listen needs --forward-to URL, e.g. http://localhost:3000/webhooks');
  if (!/^https?:\/\/[^\s]+$/.test(raw)) throw new ConfigError('--forward-to must be an http(s) URL');
  return raw;
}

/**
 * Server-sent events from a byte stream, read as the format defines them: a line ends in CRLF, LF
 * or CR (a CR that ends a chunk ends its line at once, and an LF that begins the next chunk is then
 * its second half); a blank line ends an event; an event's `data` lines are joined with LF; `id`
 * holds until a later line sets another; comments (`:`) and other fields are skipped. One callback
 * per event with data and an id.
 */
async function readEvents(body: ReadableStream<Uint8Array>, onEvent: (event: StreamedEvent) => Promise<void>) {
  const decoder = new TextDecoder();
  let buffer = '';
  let afterCr = false;
  let data: string[] = [];
  let type = '';
  let lastId = '';
  const onLine = async (line: string) => {
    if (line === '') {
      if (data.length > 0 && lastId !== '')
        await onEvent({ id: lastId, type: type || 'message', body: data.join('\n') });
      data = [];
      type = '';
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'data') data.push(value);
    else if (field === 'event') type = value;
    else if (field === 'id' && !value.includes('\0')) lastId = value;
  };
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    if (afterCr && buffer !== '') {
      if (buffer.startsWith('\n')) buffer = buffer.slice(1);
      afterCr = false;
    }
    for (let end = buffer.search(/[\r\n]/); end >= 0; end = buffer.search(/[\r\n]/)) {
      const line = buffer.slice(0, end);
      const crlf = buffer.startsWith('\r\n', end);
      afterCr = buffer[end] === '\r' && end === buffer.length - 1;
      buffer = buffer.slice(end + (crlf ? 2 : 1));
      await onLine(line);
    }
  }
}

/** Posts one event to the local URL as the dispatcher would, and prints one line about it. */
async function forward(event: StreamedEvent, forwardTo: string, token: string): Promise<void> {
  const requestTime = formatRequestTime(systemClock.now());
  const started = performance.now();
  let outcome: string;
  try {
    const response = await fetch(forwardTo, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'Request-Time': requestTime,
        Signature: signWebhook(token, requestTime, event.body),
      },
      body: event.body,
      signal: AbortSignal.timeout(forwardTimeoutMs),
    });
    const text = await response.text();
    outcome = `${response.status}${text.trim() === 'success' ? '' : ' (not "success")'}`;
  } catch (err) {
    outcome = `error: ${(err as Error).message}`;
  }
  const latency = Math.round(performance.now() - started);
  process.stdout.write(`${isoTimestamp(systemClock.now())}  ${event.type}  ${event.id}  ${outcome}  ${latency} ms\n`);
}

export async function listenCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      url: { type: 'string' },
      key: { type: 'string' },
      'forward-to': { type: 'string' },
      events: { type: 'string' },
    },
  });
  const forwardTo = parseForwardUrl(values['forward-to']);
  const types = parseEventFilter(values.events);
  const client = loadClientConfig(process.env, { url: values.url, apiKey: values.key });
  if (!client.apiKey)
    throw new ConfigError("No merchant key: set TESSERA_API_KEY or --key (the merchant's test_pr_… key)");
  const streamUrl = `${client.url}/api/services/v1/events/stream${types ? `?types=${encodeURIComponent(types)}` : ''}`;
  const token = generateSecret('whsec_');
  const stopped = new AbortController();
  process.once('SIGINT', () => stopped.abort());
  process.once('SIGTERM', () => stopped.abort());

  const connection = createReconnector((line) => process.stdout.write(`${line}\n`), stopped.signal);
  let announced = false;
  /** One connection to the stream, read until it ends; an end not asked for is thrown. */
  const streamOnce = async () => {
    let response: Response;
    try {
      response = await fetch(streamUrl, {
        headers: { authorization: `Bearer ${client.apiKey}`, accept: 'text/event-stream' },
        signal: stopped.signal,
      });
    } catch (err) {
      if (stopped.signal.aborted) return;
      throw unreachable(client.url, err);
    }
    if (!response.ok || !response.body) {
      answerData(client.url, response.status, await response.text().catch(() => ''));
      throw new ConfigError(`HTTP ${response.status}: the event stream was refused`);
    }
    if (!announced) {
      process.stdout.write(
        `Webhook token for this session: ${token}\n` +
          `Forwarding ${types ?? 'every event'} to ${forwardTo}: verify signatures with this token. Ctrl-C stops.\n` +
          'Ready\n',
      );
      announced = true;
    }
    connection.succeeded();
    try {
      await readEvents(response.body, (event) => forward(event, forwardTo, token));
    } catch (err) {
      if (stopped.signal.aborted) return;
      throw new ServiceUnavailableError(`the event stream from ${client.url} broke off (${describeNetworkError(err)})`);
    }
    if (!stopped.signal.aborted) throw new ServiceUnavailableError(`${client.url} ended the event stream`);
  };
  while (!stopped.signal.aborted) {
    try {
      await streamOnce();
    } catch (err) {
      // The first connection names what is wrong and stops; later ones are waited for (a restart).
      if (!announced) throw err;
      connection.failed(err);
    }
    if (!(await connection.wait(0))) break;
  }
  return 0;
}
