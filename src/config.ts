import path from 'node:path';
import {
  blankToUndefined,
  ConfigError,
  dataDirectory,
  defaultCheckpointWalMb,
  egressSetting,
  integer,
  mailFrom,
  oneOf,
  parseMasterKey,
  smtpUrl,
  trustProxy,
  type Source,
} from './config-rules.js';
import { parseSendingAddresses, parseSourceAddresses, parseWebhookProxy, type EgressProxy } from './config-egress.js';

/** Every setting of the service, parsed once at start-up and frozen (README.md#running-it). */
export interface Config {
  readonly port: number;
  readonly host: string;
  /** PostgreSQL connection string; unset means embedded PGlite in `dataDir`. */
  readonly databaseUrl: string | undefined;
  /** PostgreSQL only: where the event stream's LISTEN session connects; unset means databaseUrl. */
  readonly listenDatabaseUrl: string | undefined;
  readonly dataDir: string;
  /** 32-byte vault master key; unset in development means "generated into the data folder". */
  readonly masterKey: Buffer | undefined;
  /** Operator key for /admin/v1; unset means "generated into the data folder". */
  readonly adminKey: string | undefined;
  readonly nodeEnv: 'development' | 'production' | 'test';
  /** The address customers' browsers use to reach the service (3-D Secure pages). */
  readonly publicUrl: string | undefined;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** How long the sandbox processor takes to settle or reverse a payment after the fact. */
  readonly sandboxFollowUpDelayMs: number;
  /** How long a processor (Adyen, Stripe) has to answer one call; then the outcome is unknown (docs/processors.md). */
  readonly processorTimeoutMs: number;
  /**
   * How long an Idempotency-Key claim holds the key without an answer (docs/decisions/0003): a
   * retry after that takes the claim over, since the process that claimed it may have died.
   */
  readonly idempotencyLeaseMs: number;
  /** Tests only (nodeEnv test): a pause between a request's effect and storing its answer, to kill a process there. */
  readonly testAnswerDelayMs: number;
  /** Tests only (nodeEnv test): how long a payment waits in processing before the sweep replays it (5 minutes otherwise). */
  readonly testSweepAfterMs: number | undefined;
  /**
   * Tests only (refused in production): a PGlite data folder as a tar file (PGlite's
   * dumpDataDir) that PGlite in memory (`memory://`) starts from instead of running initdb; the test
   * harness makes one with every migration applied (test/helpers/templates.ts).
   */
  readonly testPgliteTemplate: string | undefined;
  /**
   * Tests only (refused in production): what a webhook delivery's lease adds to the attempt's
   * timeout (60 s by default), so that a test of a killed process waits seconds, not a minute.
   */
  readonly testWebhookLeaseMarginMs: number | undefined;
  /** How often background jobs (settlements, reversals, expiries) are looked for. */
  readonly jobPollIntervalMs: number;
  readonly databasePoolSize: number;
  /** PGlite: a checkpoint once this many MB of WAL were written since the last (docs/decisions/0031). */
  readonly pgliteCheckpointWalMb: number;
  /** docs/webhooks.md#acknowledgement-and-retries: the delays of the 12 follow-ups of a failed webhook delivery; set differently only by tests. */
  readonly webhookRetryDelaysSeconds: readonly number[];
  /** docs/webhooks.md#acknowledgement-and-retries: a webhook attempt not fully answered within this time has failed. */
  readonly webhookTimeoutMs: number;
  /** Webhook deliveries to one target URL in flight at once in one process. */
  readonly webhookConcurrencyPerTarget: number;
  /** Webhook deliveries in flight at once in one process. */
  readonly webhookMaxInFlight: number;
  /** How often the webhook dispatcher looks for due deliveries (retries) besides being woken on commit. */
  readonly webhookPollIntervalMs: number;
  /**
   * Whether this process sends webhook deliveries. Off, deliveries are still planned in each
   * event's transaction and wait in the database for a process with it on (API-only processes
   * beside `tessera worker`s).
   */
  readonly webhookDispatcher: 'on' | 'off';
  /**
   * README.md#running-it: the SMTP server e-mails go through (smtp:// or smtps://, credentials in the URL);
   * unset means each message is written as an .eml file into `<dataDir>/mail/`.
   */
  readonly smtpUrl: string | undefined;
  /** The From of every e-mail the service sends: an address, or a name and an address in < >. */
  readonly mailFrom: string;
  /** docs/api.md#base-url-and-authentication: requests per minute a public key may make on the public-key routes (src/http/rate-limit.ts). */
  readonly publicKeyRequestsPerKeyPerMinute: number;
  /** The same for one client address, all public keys together (card testing from one address). */
  readonly publicKeyRequestsPerAddressPerMinute: number;
  /**
   * The proxies whose X-Forwarded-For names the client (comma list of addresses or CIDR ranges);
   * unset means none, and the client is the connection's address (Fastify's trustProxy).
   */
  readonly trustProxy: string | undefined;
  /** Days finished webhook deliveries and their attempts are kept (docs/webhooks.md "Retention"). */
  readonly deliveryRetentionDays: number;
  /** Days events are kept, unless a delivery of theirs is still pending (Stripe keeps 30). */
  readonly eventRetentionDays: number;
  /** docs/webhooks.md#sending-addresses-allow-lists: the HTTP CONNECT proxy every webhook delivery goes through; none by default. */
  readonly webhookProxy: EgressProxy | undefined;
  /** docs/webhooks.md#sending-addresses-allow-lists: local addresses webhook connections leave from, in turn; any by default. */
  readonly webhookSourceAddresses: readonly string[];
  /**
   * Outside production, webhooks may reach private addresses besides loopback
   * (TESSERA_WEBHOOK_ALLOW_PRIVATE=on; docs/security.md, "Private addresses"). Cloud metadata never.
   */
  readonly webhookAllowPrivate: boolean;
  /** docs/webhooks.md#sending-addresses-allow-lists: the public addresses (IPs or CIDR ranges) merchants should allow; unset: not fixed. */
  readonly webhookSendingAddresses: readonly string[];
  /**
   * Whether `tessera start` and `tessera worker` apply pending migrations (`on`), or only check
   * that none is pending and refuse to start otherwise (`off`, `--no-migrate`): fleets run
   * `tessera migrate` once per deploy (docs/operations.md).
   */
  readonly autoMigrate: boolean;
  /** The port of `tessera worker`'s health and metrics server (on HOST); 0 picks a free one. */
  readonly workerHealthPort: number;
  /** A Bearer token that may read GET /metrics and nothing else (besides the operator key). */
  readonly metricsToken: string | undefined;
  /**
   * During a master-key rotation: the master key being replaced. Data keys wrapped under it are
   * still opened, until `tessera vault rotate-master-key` re-wraps them under `masterKey`.
   */
  readonly previousMasterKey: Buffer | undefined;
  /**
   * docs/webhooks.md#endpoint-health: an endpoint failing this long has its merchant's Owners, Administrators and
   * Developers e-mailed, and again once a day while it fails.
   */
  readonly endpointAlertAfterSeconds: number;
  /** docs/webhooks.md#endpoint-health: a static endpoint with nothing but failures for this long is disabled (with an e-mail). */
  readonly endpointDisableAfterSeconds: number;
  /**
   * After SIGTERM, how long the process goes on serving while readiness already answers 503
   * ("stopping"), so that the load balancer's health check takes it out before it stops accepting.
   */
  readonly shutdownDelayMs: number;
}

/** docs/webhooks.md#acknowledgement-and-retries: follow-ups after 30s, 1m, 2m, 5m, 10m, 15m, 30m, 1h, 2h, 4h, 8h, 8h. */
export const defaultWebhookRetryDelaysSeconds: readonly number[] = Object.freeze([
  30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 28800, 28800,
]);

const flagNames: Record<string, string> = {
  '--port': 'PORT',
  '--host': 'HOST',
  '--database-url': 'DATABASE_URL',
  '--data-dir': 'TESSERA_DATA_DIR',
  '--public-url': 'TESSERA_PUBLIC_URL',
  '--log-level': 'TESSERA_LOG_LEVEL',
  // README.md#running-it names these two as well. A key on the command line is visible to other users of the
  // machine (ps), so the environment remains the better place for it; the flag is there for parity.
  '--master-key': 'TESSERA_MASTER_KEY',
  '--node-env': 'NODE_ENV',
  // The SMTP URL may hold a password: the environment is the better place for it too.
  '--smtp-url': 'TESSERA_SMTP_URL',
  '--mail-from': 'TESSERA_MAIL_FROM',
  '--worker-health-port': 'TESSERA_WORKER_HEALTH_PORT',
};

/** Flags without a value, and the setting each turns to which value. */
const switchFlags: Record<string, [string, string]> = {
  '--no-migrate': ['TESSERA_AUTO_MIGRATE', 'off'],
};

const knownTesseraVariables = new Set([
  'TESSERA_DATA_DIR',
  'TESSERA_MASTER_KEY',
  'TESSERA_ADMIN_KEY',
  'TESSERA_PUBLIC_URL',
  'TESSERA_LOG_LEVEL',
  'TESSERA_SANDBOX_FOLLOW_UP_DELAY_MS',
  'TESSERA_PROCESSOR_TIMEOUT_MS',
  'TESSERA_JOB_POLL_INTERVAL_MS',
  'TESSERA_DATABASE_POOL_SIZE',
  'TESSERA_PGLITE_CHECKPOINT_WAL_MB',
  'TESSERA_LISTEN_DATABASE_URL',
  'TESSERA_WEBHOOK_RETRY_DELAYS_SECONDS',
  'TESSERA_WEBHOOK_TIMEOUT_MS',
  'TESSERA_WEBHOOK_CONCURRENCY_PER_TARGET',
  'TESSERA_WEBHOOK_MAX_IN_FLIGHT',
  'TESSERA_WEBHOOK_POLL_INTERVAL_MS',
  'TESSERA_WEBHOOK_DISPATCHER',
  'TESSERA_SMTP_URL',
  'TESSERA_MAIL_FROM',
  'TESSERA_IDEMPOTENCY_LEASE_MS',
  'TESSERA_TEST_ANSWER_DELAY_MS',
  'TESSERA_TEST_SWEEP_AFTER_MS',
  'TESSERA_RATE_PER_KEY_PER_MINUTE',
  'TESSERA_RATE_PER_ADDRESS_PER_MINUTE',
  'TESSERA_TRUST_PROXY',
  'TESSERA_DELIVERY_RETENTION_DAYS',
  'TESSERA_EVENT_RETENTION_DAYS',
  'TESSERA_WEBHOOK_PROXY',
  'TESSERA_WEBHOOK_SOURCE_ADDRESSES',
  'TESSERA_WEBHOOK_ALLOW_PRIVATE',
  'TESSERA_WEBHOOK_SENDING_ADDRESSES',
  'TESSERA_AUTO_MIGRATE',
  'TESSERA_WORKER_HEALTH_PORT',
  'TESSERA_METRICS_TOKEN',
  'TESSERA_PREVIOUS_MASTER_KEY',
  'TESSERA_ENDPOINT_ALERT_AFTER_SECONDS',
  'TESSERA_ENDPOINT_DISABLE_AFTER_SECONDS',
  'TESSERA_SHUTDOWN_DELAY_MS',
  'TESSERA_TEST_PGLITE_TEMPLATE',
  'TESSERA_TEST_WEBHOOK_LEASE_MARGIN_MS',
  // Read by the test suite and the CLI, not by the service.
  'TESSERA_TEST_DATABASE_URL',
  'TESSERA_URL',
  'TESSERA_API_KEY',
]);

/**
 * Reads the environment (and `--flag value` arguments, which win) into one typed object.
 * Anything unknown or invalid stops start-up with a message naming the setting.
 */
export function loadConfig(env: Source = process.env, argv: readonly string[] = []): Config {
  const source: Source = { ...env };
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index] ?? '';
    const [flag, inlineValue] = arg.split(/=(.*)/s, 2) as [string, string | undefined];
    const toggle = switchFlags[flag];
    if (toggle && inlineValue === undefined) {
      source[toggle[0]] = toggle[1];
      continue;
    }
    const name = flagNames[flag];
    if (!name) {
      const options = [...Object.keys(flagNames), ...Object.keys(switchFlags)].join(', ');
      throw new ConfigError(`Unknown option ${flag}. Options: ${options}`);
    }
    const value = inlineValue ?? argv[++index];
    if (value === undefined) throw new ConfigError(`Option ${flag} needs a value`);
    source[name] = value;
  }
  for (const name of Object.keys(source)) {
    if (name.startsWith('TESSERA_') && !knownTesseraVariables.has(name)) {
      throw new ConfigError(`Unknown setting ${name}. Known: ${[...knownTesseraVariables].join(', ')}`);
    }
  }

  const nodeEnv = oneOf(source, 'NODE_ENV', ['development', 'production', 'test'] as const, 'development');
  const masterKey = parseMasterKey(source.TESSERA_MASTER_KEY);
  if (nodeEnv === 'production' && !masterKey) {
    throw new ConfigError('TESSERA_MASTER_KEY is required when NODE_ENV=production (64 hex characters)');
  }
  const previousMasterKey = parseMasterKey(source.TESSERA_PREVIOUS_MASTER_KEY, 'TESSERA_PREVIOUS_MASTER_KEY');
  if (previousMasterKey && !masterKey) {
    throw new ConfigError('TESSERA_PREVIOUS_MASTER_KEY needs TESSERA_MASTER_KEY (the new key) set as well');
  }
  if (previousMasterKey && masterKey?.equals(previousMasterKey)) {
    throw new ConfigError(
      'TESSERA_PREVIOUS_MASTER_KEY is the same as TESSERA_MASTER_KEY: it must be the key being replaced',
    );
  }
  const metricsToken = blankToUndefined(source.TESSERA_METRICS_TOKEN);
  if (metricsToken !== undefined && !/^[\x21-\x7e]{24,}$/.test(metricsToken)) {
    throw new ConfigError('TESSERA_METRICS_TOKEN must be at least 24 printable characters without spaces');
  }
  const adminKey = blankToUndefined(source.TESSERA_ADMIN_KEY);
  if (adminKey !== undefined && adminKey.length < 24) {
    throw new ConfigError('TESSERA_ADMIN_KEY must be at least 24 characters');
  }
  const databaseUrl = blankToUndefined(source.DATABASE_URL);
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must start with postgres:// or postgresql://');
  }
  const listenDatabaseUrl = blankToUndefined(source.TESSERA_LISTEN_DATABASE_URL);
  if (listenDatabaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(listenDatabaseUrl)) {
    throw new ConfigError('TESSERA_LISTEN_DATABASE_URL must start with postgres:// or postgresql://');
  }
  if (listenDatabaseUrl !== undefined && databaseUrl === undefined) {
    throw new ConfigError('TESSERA_LISTEN_DATABASE_URL is for PostgreSQL: set DATABASE_URL too, or unset it');
  }
  const publicUrl = blankToUndefined(source.TESSERA_PUBLIC_URL);
  if (publicUrl !== undefined && !/^https?:\/\/[^\s]+$/.test(publicUrl)) {
    throw new ConfigError('TESSERA_PUBLIC_URL must be an http(s) URL');
  }

  return Object.freeze({
    port: integer(source, 'PORT', 8080, 0, 65535),
    host: blankToUndefined(source.HOST) ?? '127.0.0.1',
    databaseUrl,
    listenDatabaseUrl,
    dataDir: dataDirectory(blankToUndefined(source.TESSERA_DATA_DIR) ?? './data'),
    masterKey,
    adminKey,
    nodeEnv,
    publicUrl: publicUrl?.replace(/\/+$/, ''),
    logLevel: oneOf(
      source,
      'TESSERA_LOG_LEVEL',
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const,
      'info',
    ),
    sandboxFollowUpDelayMs: integer(source, 'TESSERA_SANDBOX_FOLLOW_UP_DELAY_MS', 3000, 0, 86_400_000),
    processorTimeoutMs: integer(source, 'TESSERA_PROCESSOR_TIMEOUT_MS', 30_000, 100, 300_000),
    idempotencyLeaseMs: integer(source, 'TESSERA_IDEMPOTENCY_LEASE_MS', 60_000, 100, 3_600_000),
    testAnswerDelayMs: nodeEnv === 'test' ? integer(source, 'TESSERA_TEST_ANSWER_DELAY_MS', 0, 0, 600_000) : 0,
    testSweepAfterMs:
      nodeEnv === 'test' && source.TESSERA_TEST_SWEEP_AFTER_MS
        ? integer(source, 'TESSERA_TEST_SWEEP_AFTER_MS', 1000, 100, 600_000)
        : undefined,
    testPgliteTemplate: pgliteTemplate(source, nodeEnv),
    testWebhookLeaseMarginMs: testLeaseMargin(source, nodeEnv),
    jobPollIntervalMs: integer(source, 'TESSERA_JOB_POLL_INTERVAL_MS', 1000, 10, 3_600_000),
    databasePoolSize: integer(source, 'TESSERA_DATABASE_POOL_SIZE', 10, 1, 500),
    pgliteCheckpointWalMb: integer(source, 'TESSERA_PGLITE_CHECKPOINT_WAL_MB', defaultCheckpointWalMb, 1, 4096),
    webhookRetryDelaysSeconds: retryDelays(source, nodeEnv),
    webhookTimeoutMs: integer(source, 'TESSERA_WEBHOOK_TIMEOUT_MS', 10_000, 1, 120_000),
    webhookConcurrencyPerTarget: integer(source, 'TESSERA_WEBHOOK_CONCURRENCY_PER_TARGET', 8, 1, 1000),
    webhookMaxInFlight: integer(source, 'TESSERA_WEBHOOK_MAX_IN_FLIGHT', 256, 1, 10_000),
    webhookPollIntervalMs: integer(source, 'TESSERA_WEBHOOK_POLL_INTERVAL_MS', 1000, 10, 3_600_000),
    webhookDispatcher: oneOf(source, 'TESSERA_WEBHOOK_DISPATCHER', ['on', 'off'] as const, 'on'),
    smtpUrl: smtpUrl(source.TESSERA_SMTP_URL),
    mailFrom: mailFrom(source.TESSERA_MAIL_FROM),
    publicKeyRequestsPerKeyPerMinute: integer(source, 'TESSERA_RATE_PER_KEY_PER_MINUTE', 600, 1, 1_000_000),
    publicKeyRequestsPerAddressPerMinute: integer(source, 'TESSERA_RATE_PER_ADDRESS_PER_MINUTE', 30, 1, 1_000_000),
    trustProxy: trustProxy(source.TESSERA_TRUST_PROXY),
    deliveryRetentionDays: integer(source, 'TESSERA_DELIVERY_RETENTION_DAYS', 30, 1, 36_500),
    eventRetentionDays: integer(source, 'TESSERA_EVENT_RETENTION_DAYS', 30, 1, 36_500),
    webhookProxy: egressSetting(() => parseWebhookProxy(source.TESSERA_WEBHOOK_PROXY)),
    webhookSourceAddresses: egressSetting(() => parseSourceAddresses(source.TESSERA_WEBHOOK_SOURCE_ADDRESSES)),
    webhookAllowPrivate: allowPrivate(source, nodeEnv),
    webhookSendingAddresses: egressSetting(() => parseSendingAddresses(source.TESSERA_WEBHOOK_SENDING_ADDRESSES)),
    autoMigrate: oneOf(source, 'TESSERA_AUTO_MIGRATE', ['on', 'off'] as const, 'on') === 'on',
    workerHealthPort: integer(source, 'TESSERA_WORKER_HEALTH_PORT', 8081, 0, 65535),
    metricsToken,
    previousMasterKey,
    endpointAlertAfterSeconds: integer(source, 'TESSERA_ENDPOINT_ALERT_AFTER_SECONDS', 3600, 1, 31_536_000),
    endpointDisableAfterSeconds: integer(source, 'TESSERA_ENDPOINT_DISABLE_AFTER_SECONDS', 432_000, 1, 31_536_000),
    // With the 15 s a process has to stop (docs/operations.md#topology), 10 s at most, leaving time to drain.
    shutdownDelayMs: integer(source, 'TESSERA_SHUTDOWN_DELAY_MS', 2000, 0, 10_000),
  });
}

/**
 * docs/webhooks.md#acknowledgement-and-retries: the retry schedule stated there; a comma list of seconds replaces it for tests only,
 * so production refuses it. Any number of follow-ups (0–50); a delivery is given up after the last.
 */
function retryDelays(source: Source, nodeEnv: Config['nodeEnv']): readonly number[] {
  const name = 'TESSERA_WEBHOOK_RETRY_DELAYS_SECONDS';
  const raw = blankToUndefined(source[name]);
  if (raw === undefined) return defaultWebhookRetryDelaysSeconds;
  if (nodeEnv === 'production')
    throw new ConfigError(
      `${name} is for tests; production uses the docs/webhooks.md#acknowledgement-and-retries schedule`,
    );
  const parts = raw === 'none' ? [] : raw.split(',').map((part) => part.trim());
  if (parts.length > 50 || parts.some((part) => !/^\d{1,6}$/.test(part))) {
    throw new ConfigError(`${name} must be a comma list of at most 50 whole numbers of seconds, or none`);
  }
  return Object.freeze(parts.map(Number));
}

/** TESSERA_WEBHOOK_ALLOW_PRIVATE: off by default; production refuses `on` (public addresses only there). */
function allowPrivate(source: Source, nodeEnv: Config['nodeEnv']): boolean {
  const name = 'TESSERA_WEBHOOK_ALLOW_PRIVATE';
  const on = oneOf(source, name, ['on', 'off'] as const, 'off') === 'on';
  if (on && nodeEnv === 'production') {
    throw new ConfigError(`${name}=on is for development; in production webhooks reach public addresses only`);
  }
  return on;
}

/** TESSERA_TEST_PGLITE_TEMPLATE: a file path, for tests only, so production refuses it. */
function pgliteTemplate(source: Source, nodeEnv: Config['nodeEnv']): string | undefined {
  const name = 'TESSERA_TEST_PGLITE_TEMPLATE';
  const raw = blankToUndefined(source[name]);
  if (raw === undefined) return undefined;
  if (nodeEnv === 'production') throw new ConfigError(`${name} is for tests; production databases start empty`);
  return path.resolve(raw);
}

/** TESSERA_TEST_WEBHOOK_LEASE_MARGIN_MS: for tests only, so production refuses it. */
function testLeaseMargin(source: Source, nodeEnv: Config['nodeEnv']): number | undefined {
  const name = 'TESSERA_TEST_WEBHOOK_LEASE_MARGIN_MS';
  if (blankToUndefined(source[name]) === undefined) return undefined;
  if (nodeEnv === 'production') throw new ConfigError(`${name} is for tests; production leases keep their minute`);
  return integer(source, name, 60_000, 1000, 60_000);
}

/**
 * Whether the command line may color its output: only on a terminal, and never when NO_COLOR is
 * set to anything (the no-color.org convention), so pipes and logs get plain text.
 */
export function colorWanted(isTerminal: boolean, env: Source = process.env): boolean {
  return isTerminal && (env.NO_COLOR === undefined || env.NO_COLOR === '');
}

/**
 * How the service writes its log: readable lines for a person watching a terminal during
 * development, and one JSON object a line everywhere else: in production (for log collectors),
 * in tests, and whenever the output goes to a pipe or a file.
 */
export function logFormat(nodeEnv: Config['nodeEnv'], isTerminal: boolean): 'pretty' | 'json' {
  return isTerminal && nodeEnv === 'development' ? 'pretty' : 'json';
}
