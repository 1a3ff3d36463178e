/**
 * Which processor a payment goes through (docs/processors.md): the built-in sandbox for test-mode
 * payments without a processor account, else the connector of the account the payment was made
 * with. Connectors are built from the account's sealed credentials and kept per account and
 * version (updated_at), so that new credentials take effect at the next call in every process.
 * Every call is counted and timed (tessera_processor_requests_total, …_duration_seconds).
 */
import type { Clock } from '../clock.js';
import type { Db } from '../db/db.js';
import { DomainError } from '../core/errors.js';
import type { ProcessorOutcomeLabel } from '../ops/metrics.js';
import type { LiveProcessor, Processor, ProcessorRouter } from '../processor/processor.js';
import type { Vault } from '../vault/vault.js';
import { processorAccountContext } from '../vault/secrets-at-rest.js';
import type { Credentials } from './credentials.js';
import { defaultBaseUrls, defaultDisputesBaseUrls } from './credentials.js';
import * as queries from './queries.js';
import type { ProcessorName } from './schemas.js';

export interface ConnectorSettings {
  mode: 'test' | 'live';
  credentials: Credentials;
  baseUrl: string;
  /** Adyen's Disputes API root (docs/processors-adyen.md, Disputes); null for Stripe. */
  disputesBaseUrl: string | null;
  timeoutMs: number;
  /** Judges a notification's age where the processor signs a timestamp (Stripe). */
  clock: Clock;
}

export type ConnectorFactory = (settings: ConnectorSettings) => LiveProcessor;

export interface ProcessorRegistry extends ProcessorRouter {
  /** An account's connector, for its notifications; null when the account does not exist. */
  account(accountId: string): Promise<{ row: queries.ProcessorAccountRow; connector: LiveProcessor } | null>;
}

type Observe = (processor: string, operation: string, outcome: ProcessorOutcomeLabel, seconds: number) => void;

export function createProcessorRegistry({
  db,
  vault,
  sandbox,
  factories,
  timeoutMs,
  observe,
  clock,
}: {
  clock: Clock;
  db: Db;
  vault: Vault;
  sandbox: Processor;
  factories: Record<ProcessorName, ConnectorFactory>;
  timeoutMs: number;
  observe: Observe;
}): ProcessorRegistry {
  const instrumentedSandbox = instrument(sandbox, observe);
  const built = new Map<string, { version: number; connector: LiveProcessor }>();

  function cachedConnector(row: queries.AccountVersionRow): LiveProcessor | null {
    const cached = built.get(row.id);
    return cached && cached.version === row.updated_at.getTime() ? cached.connector : null;
  }

  async function connectorOf(row: queries.ProcessorAccountRow): Promise<LiveProcessor> {
    const known = cachedConnector(row);
    if (known) return known;
    const credentials = JSON.parse(
      await vault.decrypt(row.credentials_encrypted, processorAccountContext(row.id)),
    ) as Credentials;
    const baseUrl = row.base_url ?? defaultBaseUrls[row.processor][row.mode];
    if (baseUrl === null) throw new Error(`Processor account ${row.id} has no base URL`);
    const connector = instrumentLive(
      factories[row.processor]({
        mode: row.mode,
        credentials,
        baseUrl,
        disputesBaseUrl: row.disputes_base_url ?? defaultDisputesBaseUrls[row.processor][row.mode],
        timeoutMs,
        clock,
      }),
      observe,
    );
    built.set(row.id, { version: row.updated_at.getTime(), connector });
    return connector;
  }

  /**
   * The account's status and version are read at every payment (a disable or new credentials in
   * another process count at once); its sealed credentials only when that version has no
   * connector here yet (docs/decisions/0051-connector-overhead.md).
   */
  async function accountOf(accountId: string, check: (row: queries.AccountVersionRow) => void) {
    const version = await queries.selectAccountVersion(db, accountId);
    if (!version) throw new Error(`Processor account ${accountId} is missing`);
    check(version);
    const known = cachedConnector(version);
    if (known) return known;
    const row = await queries.selectAccount(db, accountId);
    if (!row) throw new Error(`Processor account ${accountId} is missing`);
    check(row);
    return connectorOf(row);
  }

  return {
    async of(payment) {
      if (payment.processor_account_id === null) {
        // Live objects never reach the sandbox: a live key exists only beside a live account.
        if (payment.mode === 'live') throw noLiveProcessor();
        return instrumentedSandbox;
      }
      return accountOf(payment.processor_account_id, () => {});
    },
    async forNewAuthorization(payment) {
      if (payment.processor_account_id === null) return this.of(payment);
      return accountOf(payment.processor_account_id, (row) => {
        if (row.status !== 'enabled' && row.mode === 'live') throw noLiveProcessor();
      });
    },
    async account(accountId) {
      const row = await queries.selectAccount(db, accountId);
      if (!row) return null;
      return { row, connector: await connectorOf(row) };
    },
  };
}

export const noLiveProcessor = () =>
  new DomainError(
    'no_live_processor',
    'The merchant has no enabled live processor account, so no live payment can be taken; the operator connects one (docs/processors.md)',
  );

/** The same processor, each call counted and timed by operation and outcome. */
function instrument<P extends Processor>(processor: P, observe: Observe): P {
  const timed =
    <A extends unknown[], R>(
      operation: string,
      call: (...args: A) => Promise<R>,
      label: (result: R) => ProcessorOutcomeLabel,
    ) =>
    async (...args: A): Promise<R> => {
      const startedAt = performance.now();
      try {
        const result = await call(...args);
        observe(processor.name, operation, label(result), (performance.now() - startedAt) / 1000);
        return result;
      } catch (err) {
        observe(processor.name, operation, 'error', (performance.now() - startedAt) / 1000);
        throw err;
      }
    };
  const ok = (): ProcessorOutcomeLabel => 'ok';
  const authorization = (outcome: { kind: string }): ProcessorOutcomeLabel =>
    outcome.kind === 'declined' ? 'declined' : 'ok';
  const bind = <K extends keyof Processor>(name: K) =>
    (processor[name] as (...args: never[]) => unknown).bind(processor);
  return {
    ...processor,
    name: processor.name,
    statelessAuthorize: processor.statelessAuthorize,
    authorize: timed('authorize', bind('authorize') as Processor['authorize'], authorization),
    completeRedirect: timed(
      'complete_redirect',
      bind('completeRedirect') as Processor['completeRedirect'],
      authorization,
    ),
    resolveFollowUp: timed('resolve_follow_up', bind('resolveFollowUp') as Processor['resolveFollowUp'], ok),
    capture: timed('capture', bind('capture') as Processor['capture'], (outcome) =>
      outcome.kind === 'failed' ? 'declined' : 'ok',
    ),
    cancel: timed('cancel', bind('cancel') as Processor['cancel'], ok),
    refund: timed('refund', bind('refund') as Processor['refund'], (outcome) =>
      outcome.kind === 'failed' ? 'declined' : 'ok',
    ),
    resolveRefund: timed('resolve_refund', bind('resolveRefund') as Processor['resolveRefund'], ok),
  };
}

/** A live connector, each call counted and timed, its dispute responses too. */
function instrumentLive(connector: LiveProcessor, observe: Observe): LiveProcessor {
  const timed =
    <A, R>(operation: string, call: (request: A) => Promise<R>) =>
    async (request: A): Promise<R> => {
      const startedAt = performance.now();
      try {
        const result = await call(request);
        observe(connector.name, operation, 'ok', (performance.now() - startedAt) / 1000);
        return result;
      } catch (err) {
        observe(connector.name, operation, 'error', (performance.now() - startedAt) / 1000);
        throw err;
      }
    };
  return {
    ...instrument(connector, observe),
    submitDisputeEvidence: timed('dispute_submit', connector.submitDisputeEvidence.bind(connector)),
    acceptDispute: timed('dispute_accept', connector.acceptDispute.bind(connector)),
  };
}
