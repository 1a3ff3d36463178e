import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError } from '../config-rules.js';
import { loadClientConfig } from './client-config.js';

/**
 * How the `tessera` commands call a running service: the merchant API with a merchant's private
 * key, the operator API with the operator key. Both answer the envelope's `data`, or throw a
 * ConfigError whose message is printed as is (`invalid_request: …`, or why nothing answered).
 */

/**
 * The service did not answer, or answered that it cannot serve now (HTTP 5xx: stopping, database
 * unreachable): the long-running commands (`deliveries tail`, `listen`) wait and reconnect on it.
 */
export class ServiceUnavailableError extends ConfigError {}

// Node's network error codes, as a person would say them.
const networkReasons: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'timed out',
  UND_ERR_CONNECT_TIMEOUT: 'timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  UND_ERR_SOCKET: 'connection closed',
};

/**
 * What went wrong reaching `url`, named: fetch itself only says "fetch failed" and keeps the
 * reason in `cause` (for example ECONNREFUSED when `tessera start` is not running).
 */
export function describeNetworkError(err: unknown): string {
  let current: unknown = err;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as NodeJS.ErrnoException).code;
    if (code && networkReasons[code]) return networkReasons[code];
    // An AggregateError (IPv4 and IPv6 both tried) carries the attempts' errors.
    const inner = current instanceof AggregateError ? current.errors[0] : current.cause;
    if (inner === undefined) return current.message;
    current = inner;
  }
  return String((current as Error)?.message ?? current);
}

export function unreachable(url: string, err: unknown): ServiceUnavailableError {
  return new ServiceUnavailableError(
    `could not connect to ${url} (${describeNetworkError(err)}) — is \`tessera start\` running?`,
  );
}

async function call(
  baseUrl: string,
  url: string,
  authorization: string,
  method: 'GET' | 'POST' | 'DELETE',
  body: unknown,
): Promise<unknown> {
  let response: Response;
  let text: string;
  try {
    response = await fetch(url, {
      method,
      headers: {
        authorization,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    text = await response.text();
  } catch (err) {
    throw unreachable(baseUrl, err);
  }
  return answerData(baseUrl, response.status, text);
}

/** The envelope's `data` (docs/api.md#responses), or the refusal as an error: a 5xx one may pass, a 4xx one will not. */
export function answerData(baseUrl: string, status: number, text: string): unknown {
  const Refusal = status >= 500 ? ServiceUnavailableError : ConfigError;
  let parsed: { code?: string; msg?: string; data?: unknown };
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Refusal(`Unexpected answer from ${baseUrl} (HTTP ${status})`);
  }
  if (parsed.code !== 'success') throw new Refusal(`${parsed.code ?? `HTTP ${status}`}: ${parsed.msg ?? ''}`);
  return parsed.data;
}

/** The merchant API (`/api/services/v1`) with --key or TESSERA_API_KEY. */
export async function merchantCall(
  values: { url?: string; key?: string },
  method: 'GET' | 'POST' | 'DELETE',
  route: string,
  body?: unknown,
): Promise<unknown> {
  const client = loadClientConfig(process.env, { url: values.url, apiKey: values.key });
  if (!client.apiKey)
    throw new ConfigError("No merchant key: set TESSERA_API_KEY or --key (the merchant's test_pr_… key)");
  return call(client.url, `${client.url}/api/services/v1${route}`, `Bearer ${client.apiKey}`, method, body);
}

/** The operator API (`/admin/v1`) with --admin-key, TESSERA_ADMIN_KEY or the data folder's admin.key. */
export async function operatorCall(
  values: { url?: string; 'admin-key'?: string },
  method: 'GET' | 'POST',
  route: string,
  body?: unknown,
): Promise<unknown> {
  const client = loadClientConfig(process.env, { url: values.url, adminKey: values['admin-key'] });
  let adminKey = client.adminKey;
  if (!adminKey) {
    try {
      adminKey = (await readFile(path.join(client.dataDir, 'admin.key'), 'utf8')).trim();
    } catch {
      throw new ConfigError(
        'No operator key: set TESSERA_ADMIN_KEY or --admin-key (or run where the data folder holds admin.key)',
      );
    }
  }
  return call(client.url, `${client.url}/admin/v1${route}`, `Bearer ${adminKey}`, method, body);
}
