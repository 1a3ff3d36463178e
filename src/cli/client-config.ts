/** Settings of the command line when it talks to a running service (`tessera events`, `webhooks`, …). */
import { blankToUndefined, ConfigError, dataDirectory, type Source } from '../config-rules.js';

/** Settings of the command-line client: where the running service is and the operator key. */
export interface ClientConfig {
  readonly url: string;
  readonly adminKey: string | undefined;
  /** A merchant's private key, for the commands that call the merchant API. */
  readonly apiKey: string | undefined;
  readonly dataDir: string;
}

export function loadClientConfig(
  env: Source = process.env,
  overrides: { url?: string; adminKey?: string; apiKey?: string } = {},
): ClientConfig {
  const url =
    overrides.url ?? blankToUndefined(env.TESSERA_URL) ?? `http://127.0.0.1:${blankToUndefined(env.PORT) ?? '8080'}`;
  if (!/^https?:\/\/[^\s]+$/.test(url)) throw new ConfigError('TESSERA_URL (or --url) must be an http(s) URL');
  return Object.freeze({
    url: url.replace(/\/+$/, ''),
    adminKey: overrides.adminKey ?? blankToUndefined(env.TESSERA_ADMIN_KEY),
    apiKey: overrides.apiKey ?? blankToUndefined(env.TESSERA_API_KEY),
    dataDir: dataDirectory(blankToUndefined(env.TESSERA_DATA_DIR) ?? './data'),
  });
}
