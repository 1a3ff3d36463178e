import { parseArgs } from 'node:util';
import { ConfigError } from '../config-rules.js';
import { merchantCall } from './client.js';
import { cliEventCode } from './event-codes.js';

/**
 * `tessera webhooks …`: a merchant's webhook endpoints from the command line, through the merchant
 * API of a running service with the merchant's private key (so it works against a service on
 * another host, PGlite or PostgreSQL alike).
 */
export const webhooksUsage = `  webhooks update ID [--signature-case upper|lower] [--legacy true|false] [--status enabled|disabled]
                     [--endpoint-url URL] [--description TEXT] [--events a.b,c.d|*]
                     [--format moneycollect|standard]
                                 change an endpoint; --signature-case lower for verifiers that compare
                                 a lower-case HMAC (the provider's Java SDK); --format standard for
                                 Standard Webhooks headers (the token stays the same); --status enabled on
                                 a disabled endpoint prints how to recover what it missed
  webhooks roll ID [--expires-in SECONDS] [--signature-algorithm hmac-sha256|ed25519]
                                 a new token; standard format: the old one keeps signing beside it for
                                 SECONDS (up to 86400), else it stops at once; --signature-algorithm
                                 ed25519 (standard format) signs v1a, with a key pair whose public key
                                 whpk_… is printed`;

const options = {
  url: { type: 'string' },
  key: { type: 'string' },
} as const;

/** `--events a.b,c.d`: each a known event code (either name; docs/webhooks.md#endpoints-and-tokens), or `*` for every event. */
function parseEnabledEvents(raw: string | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  return raw.split(',').map((type) => (type.trim() === '*' ? '*' : cliEventCode('--events', type.trim())));
}

function oneOf<T extends string>(value: string | undefined, allowed: readonly T[], flag: string): T | undefined {
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) throw new ConfigError(`--${flag} takes ${allowed.join(' or ')}`);
  return value as T;
}

export async function webhooksCommand(argv: string[]): Promise<unknown> {
  const [action, ...rest] = argv;
  if (action === 'update') {
    const { values, positionals } = parseArgs({
      args: rest,
      allowPositionals: true,
      options: {
        ...options,
        'signature-case': { type: 'string' },
        legacy: { type: 'string' },
        status: { type: 'string' },
        'endpoint-url': { type: 'string' },
        description: { type: 'string' },
        events: { type: 'string' },
        format: { type: 'string' },
      },
    });
    const id = positionals[0];
    if (!id) throw new ConfigError('webhooks update needs the endpoint id (we_…)');
    const legacy = oneOf(values.legacy, ['true', 'false'], 'legacy');
    const route = `/webhook_endpoints/${encodeURIComponent(id)}`;
    // Re-enabling offers to recover what was missed (docs/webhooks.md#endpoint-health): since it began failing, if it did.
    const before =
      values.status === 'enabled'
        ? ((await merchantCall(values, 'GET', route)) as { status: string; failingSince: string | null })
        : undefined;
    const updated = await merchantCall(values, 'POST', `${route}/update`, {
      signatureCase: oneOf(values['signature-case'], ['upper', 'lower'], 'signature-case'),
      legacyNotifications: legacy === undefined ? undefined : legacy === 'true',
      status: oneOf(values.status, ['enabled', 'disabled'], 'status'),
      url: values['endpoint-url'],
      description: values.description,
      enabledEvents: parseEnabledEvents(values.events),
      format: oneOf(values.format, ['moneycollect', 'standard'], 'format'),
    });
    if (before?.status === 'disabled') {
      const since = before.failingSince ?? '24h';
      // On stderr, so that stdout stays the endpoint's JSON.
      process.stderr.write(
        `Enabled. To send what it missed while disabled: tessera webhooks recover ${id} --since ${since}\n`,
      );
    }
    return updated;
  }
  if (action === 'roll') {
    const { values, positionals } = parseArgs({
      args: rest,
      allowPositionals: true,
      options: { ...options, 'expires-in': { type: 'string' }, 'signature-algorithm': { type: 'string' } },
    });
    const id = positionals[0];
    if (!id) throw new ConfigError('webhooks roll needs the endpoint id (we_…)');
    const expiresIn = values['expires-in'];
    if (expiresIn !== undefined && !/^\d{1,6}$/.test(expiresIn)) {
      throw new ConfigError('--expires-in takes a number of seconds (0 to 86400)');
    }
    return merchantCall(values, 'POST', `/webhook_endpoints/${encodeURIComponent(id)}/roll_token`, {
      expiresInSeconds: expiresIn === undefined ? undefined : Number(expiresIn),
      signatureAlgorithm: oneOf(values['signature-algorithm'], ['hmac-sha256', 'ed25519'], 'signature-algorithm'),
    });
  }
  throw new ConfigError(`webhooks takes list, update, roll, check or doctor\n\n${webhooksUsage}`);
}
