import { parseArgs } from 'node:util';
import { ConfigError } from '../config-rules.js';
import { merchantCall } from './client.js';
import { painter, printJson as json, table } from './output.js';

/**
 * `tessera webhooks list` (a table with each endpoint's health) and `tessera webhooks recover`
 * (issue 20, docs/webhooks.md): on a terminal the table is aligned and colored; `--json` prints the
 * API's objects for scripts.
 */
export const webhooksHealthUsage = `  webhooks list [--limit N] [--json]
                                 the merchant's webhook endpoints with their health: healthy, failing
                                 (since when, the last error, the next attempt) or disabled
  webhooks recover ID --since TIME|24h|7d [--until TIME] [--json]
                                 send the endpoint again, one at a time and oldest first, every event of
                                 the window it has not acknowledged (enable a disabled endpoint first)`;

interface Endpoint {
  id: string;
  kind: 'static' | 'dynamic';
  url: string | null;
  status: 'enabled' | 'disabled';
  health: 'healthy' | 'failing' | 'disabled';
  failingSince: string | null;
  lastError: string | null;
  disabledReason: 'failing' | 'gone' | null;
  nextAttemptAt: string | null;
}

const options = { url: { type: 'string' }, key: { type: 'string' }, json: { type: 'boolean' } } as const;
const colors = painter();

/** A failing endpoint is never green: red while failing, yellow once disabled. */
function paintHealth(health: string, text: string): string {
  if (health === 'healthy') return colors.green(text);
  if (health === 'failing') return colors.red(text);
  return colors.yellow(text);
}

function healthText(endpoint: Endpoint): string {
  if (endpoint.health !== 'disabled' || endpoint.disabledReason === null) return endpoint.health;
  return `disabled (${endpoint.disabledReason === 'gone' ? 'HTTP 410' : 'failing'})`;
}

async function list(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { ...options, limit: { type: 'string' } } });
  const page = (await merchantCall(
    values,
    'GET',
    `/webhook_endpoints?limit=${encodeURIComponent(values.limit ?? '100')}`,
  )) as { data: Endpoint[]; hasMore: boolean };
  if (values.json) return json(page);
  const rows = page.data.map((endpoint) => [
    endpoint.id,
    endpoint.kind === 'dynamic' ? 'notifyUrl (dynamic)' : (endpoint.url ?? ''),
    healthText(endpoint),
    endpoint.failingSince ?? '-',
    endpoint.nextAttemptAt ?? '-',
    endpoint.lastError ?? '',
  ]);
  const healths = page.data.map((endpoint) => endpoint.health);
  process.stdout.write(
    `${table(['ID', 'URL', 'HEALTH', 'FAILING SINCE', 'NEXT ATTEMPT', 'LAST ERROR'], rows, [
      undefined,
      undefined,
      (row, text) => paintHealth(healths[row] ?? 'healthy', text),
      (_row, text) => colors.dim(text),
      (_row, text) => colors.dim(text),
    ])}\n`,
  );
  if (page.hasMore) process.stdout.write(colors.dim('… more: --limit up to 100\n'));
  const needing = page.data.filter((endpoint) => endpoint.health !== 'healthy');
  for (const endpoint of needing.filter((candidate) => candidate.health === 'disabled')) {
    process.stdout.write(
      colors.dim(`${endpoint.id} is disabled: tessera webhooks update ${endpoint.id} --status enabled, then recover\n`),
    );
  }
  return 0;
}

/** `24h`, `7d`, `90m`: that long before now; anything else must be an ISO 8601 timestamp. */
export function parseSince(value: string, now: Date, flag: string): string {
  const relative = /^(\d+)([mhd])$/.exec(value);
  if (relative) {
    const unitMs = { m: 60_000, h: 3_600_000, d: 86_400_000 }[relative[2] as 'm' | 'h' | 'd'];
    return new Date(now.getTime() - Number(relative[1]) * unitMs).toISOString();
  }
  if (Number.isNaN(Date.parse(value))) {
    throw new ConfigError(`--${flag} takes an ISO 8601 time (2026-11-22T18:30:00Z) or a span back from now (24h, 7d)`);
  }
  return value;
}

async function recover(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { ...options, since: { type: 'string' }, until: { type: 'string' } },
  });
  const id = positionals[0];
  if (!id) throw new ConfigError('webhooks recover needs the endpoint id (we_…)');
  if (!values.since) throw new ConfigError('webhooks recover needs --since (an ISO 8601 time, or 24h, 7d, …)');
  const now = new Date();
  const recovery = (await merchantCall(values, 'POST', `/webhook_endpoints/${encodeURIComponent(id)}/recover`, {
    since: parseSince(values.since, now, 'since'),
    until: values.until === undefined ? undefined : parseSince(values.until, now, 'until'),
  })) as { events: number; deliveriesCreated: number; deliveriesRescheduled: number; since: string; until: string };
  if (values.json) return json(recovery);
  process.stdout.write(
    `${recovery.events} event(s) from ${recovery.since} to ${recovery.until} sent again to ${id}, oldest first, one at a time ` +
      `(${recovery.deliveriesCreated} new deliveries, ${recovery.deliveriesRescheduled} retries brought forward)\n`,
  );
  return 0;
}

export const webhooksHealthActions = ['list', 'recover'] as const;

export async function webhooksHealthCommand(argv: string[]): Promise<number> {
  const [action, ...rest] = argv;
  if (action === 'recover') return recover(rest);
  return list(rest);
}
