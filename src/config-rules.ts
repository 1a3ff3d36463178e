/**
 * How a setting is read and refused (README.md#running-it): the one error every bad setting becomes, named
 * after the setting and its rule, and the parsers shared by the service's settings (config.ts) and
 * the command line's (cli/client-config.ts).
 */
import path from 'node:path';
import { EgressSettingError } from './config-egress.js';

export type Source = Record<string, string | undefined>;

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** The egress settings' own rules (src/config-egress.ts), refused like any other setting. */
export function egressSetting<T>(parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    if (err instanceof EgressSettingError) throw new ConfigError(err.message);
    throw err;
  }
}

/** The default of TESSERA_PGLITE_CHECKPOINT_WAL_MB: a checkpoint once 64 MB of WAL were written since the last. */
export const defaultCheckpointWalMb = 64;

export const defaultMailFrom = 'Tessera <no-reply@localhost>';

/**
 * smtp:// (STARTTLS when the server offers it) or smtps:// (TLS from the start), with a host.
 * The message never repeats the value, which may carry a password.
 */
export function smtpUrl(raw: string | undefined): string | undefined {
  const value = blankToUndefined(raw);
  if (value === undefined) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') || url.hostname === '') {
    throw new ConfigError(
      'TESSERA_SMTP_URL must be an smtp:// or smtps:// URL with a host, e.g. smtp://user:password@mail.example.com:587',
    );
  }
  return value;
}

/**
 * `no-reply@example.com` or `Example Shop <no-reply@example.com>`: one address, and nothing that
 * could end the From header early (no line break), since it goes into every message as written.
 */
export function mailFrom(raw: string | undefined): string {
  const value = blankToUndefined(raw);
  if (value === undefined) return defaultMailFrom;
  const address = '[^\\s<>@",;]+@[^\\s<>@",;]+';
  const form = new RegExp(`^(?:${address}|[^<>\\r\\n"]*<${address}>|"[^"\\r\\n]*"\\s*<${address}>)$`);
  if (value.length > 254 || !form.test(value)) {
    throw new ConfigError(
      'TESSERA_MAIL_FROM must be an e-mail address, or a name and an address in < >, e.g. Example Shop <billing@example.com>',
    );
  }
  return value;
}

/** Addresses (IPv4 or IPv6) or CIDR ranges, comma separated: what Fastify's trustProxy takes as a list. */
export function trustProxy(raw: string | undefined): string | undefined {
  const value = blankToUndefined(raw);
  if (value === undefined) return undefined;
  const parts = value.split(',').map((part) => part.trim());
  if (parts.some((part) => !/^[0-9A-Fa-f.:]+(\/\d{1,3})?$/.test(part))) {
    throw new ConfigError(
      'TESSERA_TRUST_PROXY must be a comma list of proxy addresses or CIDR ranges, e.g. 10.0.0.0/8',
    );
  }
  return parts.join(',');
}

/** `memory://` keeps PGlite in memory (nothing persisted); anything else is a folder. */
export function dataDirectory(value: string): string {
  return value.startsWith('memory://') ? value : path.resolve(value);
}

export function blankToUndefined(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

export function integer(source: Source, name: string, fallback: number, min: number, max: number): number {
  const raw = blankToUndefined(source[name]);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}`);
  }
  return Number(raw);
}

export function oneOf<const T extends string>(source: Source, name: string, values: readonly T[], fallback: T): T {
  const raw = blankToUndefined(source[name]);
  if (raw === undefined) return fallback;
  if (!(values as readonly string[]).includes(raw))
    throw new ConfigError(`${name} must be one of ${values.join(', ')}`);
  return raw as T;
}

export function parseMasterKey(raw: string | undefined, name = 'TESSERA_MASTER_KEY'): Buffer | undefined {
  const value = blankToUndefined(raw);
  if (value === undefined) return undefined;
  if (!/^[0-9a-fA-F]{64}$/.test(value)) throw new ConfigError(`${name} must be 64 hex characters (32 bytes)`);
  return Buffer.from(value, 'hex');
}
