import { isIP } from 'node:net';

/*
 * docs/webhooks.md#sending-addresses-allow-lists: the settings that fix where webhook deliveries leave from. Parsed here, as plain
 * functions of the raw values, and called by src/config.ts (which alone reads the environment).
 * A message names the setting and the rule, never a proxy password.
 */

export class EgressSettingError extends Error {
  override readonly name = 'EgressSettingError';
}

/** An HTTP CONNECT proxy: where it listens and, when it asks for one, the Basic credentials. */
export interface EgressProxy {
  readonly host: string;
  readonly port: number;
  /** `Basic …` for Proxy-Authorization, from the URL's user and password; absent without them. */
  readonly authorization: string | undefined;
  /** The URL without its password, for start-up lines and docs. */
  readonly display: string;
}

/** TESSERA_WEBHOOK_PROXY: `http://[user:password@]host:port`. */
export function parseWebhookProxy(raw: string | undefined): EgressProxy | undefined {
  const value = raw?.trim();
  if (!value) return undefined;
  const rule =
    'TESSERA_WEBHOOK_PROXY must be an http:// URL of an HTTP CONNECT proxy, e.g. http://egress.internal:3128';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new EgressSettingError(rule);
  }
  if (url.protocol !== 'http:' || url.hostname === '' || (url.pathname !== '/' && url.pathname !== '')) {
    throw new EgressSettingError(rule);
  }
  if (url.search || url.hash) throw new EgressSettingError(rule);
  const user = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  const authorization = user || password ? `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` : undefined;
  const port = url.port === '' ? 80 : Number(url.port);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const shown = isIP(host) === 6 ? `[${host}]` : host;
  return Object.freeze({
    host,
    port,
    authorization,
    display: `http://${user ? `${url.username}:***@` : ''}${shown}:${port}`,
  });
}

/** TESSERA_WEBHOOK_SOURCE_ADDRESSES: local IP addresses, comma separated, each once. */
export function parseSourceAddresses(raw: string | undefined): readonly string[] {
  const entries = splitList(raw);
  for (const entry of entries) {
    if (isIP(entry) === 0) {
      throw new EgressSettingError(
        `TESSERA_WEBHOOK_SOURCE_ADDRESSES must list IP addresses of this host, comma separated; "${entry}" is not an IP address`,
      );
    }
  }
  if (new Set(entries).size !== entries.length) {
    throw new EgressSettingError('TESSERA_WEBHOOK_SOURCE_ADDRESSES lists an address twice');
  }
  return Object.freeze(entries);
}

/**
 * TESSERA_WEBHOOK_SENDING_ADDRESSES: what merchants should allow, as IP addresses or CIDR
 * ranges (`203.0.113.7`, `198.51.100.0/28`, `2001:db8::/64`), comma separated. Shown to
 * merchants as the operator wrote them, each trimmed, in the operator's order.
 */
export function parseSendingAddresses(raw: string | undefined): readonly string[] {
  const entries = splitList(raw);
  for (const entry of entries) {
    const [address = '', prefix, extra] = entry.split('/');
    const family = isIP(address);
    const maxPrefix = family === 4 ? 32 : 128;
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= maxPrefix);
    if (family === 0 || extra !== undefined || !prefixOk) {
      throw new EgressSettingError(
        `TESSERA_WEBHOOK_SENDING_ADDRESSES must list IP addresses or CIDR ranges (e.g. 203.0.113.7,198.51.100.0/28), comma separated; "${entry}" is neither`,
      );
    }
  }
  return Object.freeze(entries);
}

function splitList(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}
