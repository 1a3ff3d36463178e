import { parseArgs } from 'node:util';
import { ConfigError } from '../config-rules.js';
import { merchantCall } from './client.js';
import { painter, printJson as json } from './output.js';
import { createReconnector } from './reconnect.js';
import { cliEventCode } from './event-codes.js';

/**
 * `tessera events list|get|resend` and `tessera deliveries tail` (issue 12): the merchant's events
 * and webhook attempts from the command line, through the merchant API. On a terminal the output
 * is aligned and colored; `--json` prints the API's objects for scripts (one per line for tail).
 */
export const eventsUsage = `  events list [--type CODE] [--object ID] [--limit N] [--json]
  events get EVT_ID [--json]     the event, its body and its deliveries
  events resend EVT_ID [--endpoint we_…] [--json]
                                 send the event again as new deliveries
  deliveries tail [--interval MS] [--json]
                                 print each new webhook attempt as it happens; waits out a restart of
                                 the service and reconnects (Ctrl-C stops)`;

interface Event {
  id: string;
  type: string;
  created: string;
  data: { id?: string } & Record<string, unknown>;
}

interface Delivery {
  id: string;
  eventId: string;
  endpointId: string;
  url: string;
  kind: string;
  type: string;
  status: string;
  attempts: number;
  nextAttemptAt: string | null;
}

interface Attempt {
  id: string;
  deliveryId: string;
  attemptNumber: number;
  attemptedAt: string;
  durationMs: number;
  httpStatus: number | null;
  error: string | null;
  succeeded: boolean;
}

const options = { url: { type: 'string' }, key: { type: 'string' }, json: { type: 'boolean' } } as const;

const colors = painter();

/** Green for what went through, red for what failed, yellow for what is still under way. */
function byOutcome(word: string): string {
  if (/succeed|success|paid/.test(word)) return colors.green(word);
  if (/fail|cancel|void|deleted/.test(word)) return colors.red(word);
  return colors.yellow(word);
}

function eventLine(event: Event, typeWidth: number): string {
  const type = event.type.padEnd(typeWidth);
  return `${colors.dim(event.created)}  ${byOutcome(type)}  ${event.id}  ${colors.cyan(event.data.id ?? '')}`;
}

function deliveryLine(delivery: Delivery): string {
  // A pending delivery without a time waits for the one before it in a recover (docs/webhooks.md, Recover).
  const waiting = delivery.status === 'pending' && delivery.nextAttemptAt === null;
  const next = delivery.nextAttemptAt
    ? colors.dim(`  next ${delivery.nextAttemptAt}`)
    : waiting
      ? colors.dim('  next after the one before it (recover)')
      : '';
  return `  ${delivery.id}  ${delivery.kind.padEnd(8)}  ${byOutcome(delivery.status.padEnd(9))}  ${delivery.attempts} attempt(s)  ${delivery.url}${next}`;
}

function positional(positionals: string[], what: string): string {
  const id = positionals[0];
  if (!id) throw new ConfigError(`${what} needs the event id (evt_…)`);
  return encodeURIComponent(id);
}

async function list(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { ...options, type: { type: 'string' }, object: { type: 'string' }, limit: { type: 'string' } },
  });
  const query = new URLSearchParams({ limit: values.limit ?? '20' });
  // The API filters by the code as docs/webhooks.md#event-codes writes it; the endpoint_ form names the same events.
  if (values.type) query.set('type', cliEventCode('--type', values.type));
  if (values.object) query.set('objectId', values.object);
  const page = (await merchantCall(values, 'GET', `/events?${query}`)) as { data: Event[]; hasMore: boolean };
  if (values.json) return json(page);
  const width = Math.max(0, ...page.data.map((event) => event.type.length));
  const lines = page.data.map((event) => eventLine(event, width));
  process.stdout.write(`${lines.join('\n')}${lines.length ? '\n' : 'No events\n'}`);
  if (page.hasMore) process.stdout.write(colors.dim('… more: --limit up to 100, or filter with --type / --object\n'));
  return 0;
}

async function get(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options });
  const id = positional(positionals, 'events get');
  const event = (await merchantCall(values, 'GET', `/events/${id}`)) as Event;
  const deliveries = (await merchantCall(values, 'GET', `/events/${id}/deliveries?limit=100`)) as { data: Delivery[] };
  if (values.json) return json({ event, deliveries: deliveries.data });
  const body = JSON.stringify(event.data, null, 2).replace(/^/gm, '  ');
  const rows = deliveries.data.map(deliveryLine);
  process.stdout.write(
    `${colors.bold(event.id)}  ${byOutcome(event.type)}  ${colors.dim(event.created)}\n${body}\n` +
      `Deliveries:\n${rows.length ? rows.join('\n') : '  none (no endpoint or notifyUrl wanted it)'}\n`,
  );
  return 0;
}

async function resend(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { ...options, endpoint: { type: 'string' } },
  });
  const id = positional(positionals, 'events resend');
  const body = values.endpoint ? { endpointId: values.endpoint } : {};
  const made = (await merchantCall(values, 'POST', `/events/${id}/resend`, body)) as { data: Delivery[] };
  if (values.json) return json(made);
  const rows = made.data.map(deliveryLine);
  process.stdout.write(`${rows.length} new deliveries\n${rows.join('\n')}${rows.length ? '\n' : ''}`);
  return 0;
}

export async function eventsCommand(argv: string[]): Promise<number> {
  const [action, ...rest] = argv;
  if (action === 'list') return list(rest);
  if (action === 'get') return get(rest);
  if (action === 'resend') return resend(rest);
  throw new ConfigError(`events takes list, get or resend\n\n${eventsUsage}`);
}

/** One attempt as tail prints it: time, type, delivery, attempt number, status, latency, url. */
function attemptLine(delivery: Delivery, attempt: Attempt): string {
  const outcome = attempt.succeeded
    ? colors.green(`${attempt.httpStatus} success`)
    : colors.red(`${attempt.httpStatus ?? '---'} ${attempt.error ?? 'failed'}`);
  return (
    `${colors.dim(attempt.attemptedAt)}  ${delivery.type}  ${delivery.id}  #${attempt.attemptNumber}  ` +
    `${outcome}  ${attempt.durationMs} ms  ${delivery.url}`
  );
}

/**
 * Polls the newest deliveries and the ones still pending (retries of older events) and prints the
 * attempts made since the last look. What happened before tail started is not printed.
 */
export async function deliveriesCommand(argv: string[]): Promise<number> {
  const [action, ...rest] = argv;
  if (action !== 'tail') throw new ConfigError(`deliveries takes tail\n\n${eventsUsage}`);
  const { values } = parseArgs({ args: rest, options: { ...options, interval: { type: 'string' } } });
  const intervalMs = Number(values.interval ?? '2000');
  if (!Number.isInteger(intervalMs) || intervalMs < 100)
    throw new ConfigError('--interval takes milliseconds, at least 100');
  const seen = new Map<string, number>();
  const look = async (announce: boolean) => {
    const [newest, pending] = await Promise.all(
      ['limit=100', 'limit=100&status=pending'].map(
        async (query) => (await merchantCall(values, 'GET', `/webhook_deliveries?${query}`)) as { data: Delivery[] },
      ),
    );
    const deliveries = new Map([...newest!.data, ...pending!.data].map((delivery) => [delivery.id, delivery]));
    for (const delivery of [...deliveries.values()].reverse()) {
      const before = seen.get(delivery.id) ?? 0;
      seen.set(delivery.id, delivery.attempts);
      if (!announce || delivery.attempts <= before) continue;
      const attempts = (await merchantCall(values, 'GET', `/webhook_deliveries/${delivery.id}/attempts`)) as {
        data: Attempt[];
      };
      const fresh = attempts.data.filter((attempt) => attempt.attemptNumber > before);
      fresh.sort((a, b) => a.attemptNumber - b.attemptNumber);
      for (const attempt of fresh) {
        process.stdout.write(
          values.json
            ? `${JSON.stringify({ ...attempt, eventId: delivery.eventId, type: delivery.type, url: delivery.url })}\n`
            : `${attemptLine(delivery, attempt)}\n`,
        );
      }
    }
  };
  await look(false);
  // On stderr, so that --json output stays one attempt per line.
  process.stderr.write(colors.dim('Watching webhook deliveries; Ctrl-C stops.\n'));
  const stopped = new AbortController();
  process.once('SIGINT', () => stopped.abort());
  process.once('SIGTERM', () => stopped.abort());
  // A service restart is waited out (status lines on stderr, like the line above).
  const connection = createReconnector((line) => process.stderr.write(`${line}\n`), stopped.signal);
  while (await connection.wait(intervalMs)) await connection.attempt(() => look(true));
  return 0;
}
