import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../clock.js';
import type { Db, Queryable } from '../../db/db.js';
import type { MerchantContext } from '../../core/merchant-context.js';
import type { JobRunner } from '../../jobs/runner.js';
import type { MailTransport } from '../../mail/transport.js';
import type { Role } from '../../team/permissions.js';
import { isoTimestamp } from '../../time.js';
import { alertMail, disabledMail } from './mail.js';
import * as queries from './queries.js';
import { endpointHealths, endpointStates, type EndpointHealth } from './states.js';

/*
 * Endpoint health (issue 20, docs/webhooks.md#endpoint-health, docs/decisions/0016): the delivery engine keeps each
 * endpoint's failing_since and last_error with every group of attempts; this service
 * - sweeps (a periodic task of the job runner, every minute, in any number of processes): disables
 *   static endpoints failing for TESSERA_ENDPOINT_DISABLE_AFTER_SECONDS, and claims the alerts due
 *   for endpoints failing for TESSERA_ENDPOINT_ALERT_AFTER_SECONDS (then daily);
 * - disables a static endpoint at once when it answers HTTP 410 Gone (Standard Webhooks);
 * - sends the e-mails as scheduled jobs written in the same transaction as the change, so that a
 *   process dying after the commit, or an SMTP server that is down, delays an e-mail but never loses
 *   it; the job re-reads the endpoint and sends nothing once the news is stale (recovered, re-enabled).
 */

const dayMs = 24 * 60 * 60 * 1000;
/** How often the sweep runs in each process (cheap: the partial index on failing endpoints). */
export const healthSweepEveryMs = 60 * 1000;

export const failingMailJob = 'webhook_endpoint.failing_mail';
export const disabledMailJob = 'webhook_endpoint.disabled_mail';

/** docs/dashboard.md#roles: the roles that see and operate webhooks are the ones told about them. */
const toldRoles: readonly Role[] = ['owner', 'administrator', 'developer'];

export interface EndpointHealthDeps {
  db: Db;
  clock: Clock;
  logger: FastifyBaseLogger;
  jobs: JobRunner;
  mail: MailTransport;
  /** The merchant's team members (the team service's list). */
  members: (merchantId: string) => Promise<ReadonlyArray<{ email: string; role: Role }>>;
  merchantName: (merchantId: string) => Promise<string>;
  publicUrl: () => string;
  alertAfterSeconds: number;
  disableAfterSeconds: number;
}

export function createEndpointHealthService(deps: EndpointHealthDeps) {
  const { db, clock, logger, jobs, mail } = deps;

  async function sendToTeam(merchantId: string, message: { subject: string; text: string }): Promise<void> {
    const recipients = (await deps.members(merchantId)).filter((member) => toldRoles.includes(member.role));
    let failures = 0;
    for (const recipient of recipients) {
      try {
        await mail.send({ to: recipient.email, ...message });
      } catch (err) {
        failures++;
        logger.error({ err, merchantId }, 'webhook endpoint e-mail could not be sent');
      }
    }
    // Nobody was reached: the job stays due and is tried again.
    if (recipients.length > 0 && failures === recipients.length) {
      throw new Error('No webhook endpoint e-mail could be sent');
    }
  }

  async function view(row: queries.EndpointHealthRow) {
    return {
      merchantName: await deps.merchantName(row.merchant_id),
      mode: row.mode,
      endpointId: row.id,
      target: row.kind === 'dynamic' ? "the payments' notifyUrl (dynamic endpoint)" : (row.url ?? ''),
      failingSince: row.failing_since ? isoTimestamp(row.failing_since) : null,
      lastError: row.last_error,
      nextAttemptAt: row.next_attempt_at ? isoTimestamp(row.next_attempt_at) : null,
      disabledReason: row.disabled_reason,
      pageUrl: `${deps.publicUrl()}/dashboard/developers/webhooks/${row.id}`,
    };
  }

  jobs.register(failingMailJob, async (endpointId) => {
    const row = await queries.selectEndpointHealth(db, endpointId);
    // Recovered, disabled or deleted since the alert was claimed: the news is stale.
    if (!row || row.deleted_at !== null || row.status !== 'enabled' || row.failing_since === null) return;
    await sendToTeam(row.merchant_id, alertMail(await view(row)));
  });

  jobs.register(disabledMailJob, async (endpointId) => {
    const row = await queries.selectEndpointHealth(db, endpointId);
    if (!row || row.deleted_at !== null || row.status !== 'disabled') return;
    await sendToTeam(row.merchant_id, disabledMail(await view(row)));
  });

  return {
    /**
     * Disables the endpoints failing too long and claims the alerts that are due, each with its
     * e-mail job, in one transaction. Safe to run in every process at once (conditional updates).
     */
    async sweep(): Promise<{ alerted: string[]; disabled: string[] }> {
      const now = clock.now();
      const nowMs = now.getTime();
      return db.transaction(async (tx) => {
        const disabled = await queries.disableLongFailing(
          tx,
          endpointStates.transition('autoDisable', 'disabled'),
          new Date(nowMs - deps.disableAfterSeconds * 1000),
          now,
        );
        for (const id of disabled) await jobs.schedule(tx, disabledMailJob, id, now);
        const alerted = await queries.claimDueAlerts(
          tx,
          new Date(nowMs - deps.alertAfterSeconds * 1000),
          new Date(nowMs - dayMs),
          now,
        );
        for (const id of alerted) await jobs.schedule(tx, failingMailJob, id, now);
        if (disabled.length > 0) logger.warn({ endpoints: disabled }, 'webhook endpoints disabled after failing');
        return { alerted, disabled };
      });
    },

    /**
     * An endpoint answered HTTP 410 Gone: the Standard Webhooks advice is to stop sending to it at
     * once. Static endpoints only (a payment's notifyUrl that is gone says nothing of the others).
     */
    async endpointGone(endpointId: string): Promise<void> {
      const now = clock.now();
      const disabled = await db.transaction(async (tx) => {
        const done = await queries.disableGone(
          tx,
          endpointStates.transition('autoDisable', 'disabled'),
          endpointId,
          now,
        );
        if (done) await jobs.schedule(tx, disabledMailJob, endpointId, now);
        return done;
      });
      if (disabled) {
        logger.warn({ endpointId }, 'webhook endpoint disabled: it answered HTTP 410 Gone');
        // The e-mail goes out with the next run of the jobs, not a poll interval later.
        void jobs.runDue().catch((err: unknown) => logger.error({ err }, 'scheduled jobs could not be run'));
      }
    },

    /**
     * Live endpoints of every merchant by health: the tessera_webhook_endpoints{health} gauge
     * (src/ops/gauges.ts, which reads them in its own transaction: `source`).
     */
    async countByHealth(source: Queryable = db): Promise<Record<EndpointHealth, number>> {
      const counts = Object.fromEntries(endpointHealths.map((health) => [health, 0])) as Record<EndpointHealth, number>;
      for (const row of await queries.countByHealth(source)) counts[row.health] = Number(row.count);
      return counts;
    },

    /** The merchant's endpoints that need attention (the dashboard's home): failing, or disabled by Tessera. */
    async needingAttention(merchant: Pick<MerchantContext, 'merchantId' | 'mode'>) {
      const rows = await queries.selectNeedingAttention(db, merchant.merchantId, merchant.mode);
      return rows.map((row) => ({
        id: row.id,
        kind: row.kind,
        url: row.url,
        health: (row.status === 'disabled' ? 'disabled' : 'failing') as EndpointHealth,
        failingSince: row.failing_since ? isoTimestamp(row.failing_since) : null,
        lastError: row.last_error,
        disabledReason: row.disabled_reason,
        nextAttemptAt: row.next_attempt_at ? isoTimestamp(row.next_attempt_at) : null,
      }));
    },
  };
}

export type EndpointHealthService = ReturnType<typeof createEndpointHealthService>;
