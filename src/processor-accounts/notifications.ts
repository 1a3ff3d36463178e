/**
 * A processor's notifications to Tessera (docs/processors.md, Notifications): verified by the
 * account's connector (Adyen's HMAC per item, Stripe-Signature), each applied once, whichever of
 * it and the API's own answer comes first. A notification is marked applied only after its
 * effect committed, so one that fails half-way is applied when the processor sends it again;
 * applying it twice changes nothing, since every change is conditional on the state it leaves.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { Db } from '../db/db.js';
import { NotificationRefused, type ProcessorNotification } from '../processor/processor.js';
import type { RefundSettlement } from '../processor/processor.js';
import type { ProcessorRegistry } from './connectors.js';
import * as queries from './queries.js';

type Applied = 'applied' | 'ignored';

/** What the payments and refunds services do with a notification (bound in services.ts). */
export interface NotificationTargets {
  authorisation(
    accountId: string,
    paymentId: string,
    outcome: Extract<ProcessorNotification, { kind: 'authorisation' }>['outcome'],
  ): Promise<Applied>;
  capture(accountId: string, paymentId: string, success: boolean, reason: string | null): Promise<Applied>;
  refund(
    accountId: string,
    refundId: string,
    settlement: Exclude<RefundSettlement, { kind: 'pending' }>,
  ): Promise<Applied>;
  /** Disputes opened, moved and closed (docs/disputes.md, Live). */
  dispute(accountId: string, notice: Extract<ProcessorNotification, { kind: 'dispute' }>): Promise<Applied>;
}

export interface NotificationAnswer {
  status: number;
  contentType: string;
  body: string;
}

export function createNotificationReceiver({
  db,
  clock,
  logger,
  registry,
  targets,
}: {
  db: Db;
  clock: Clock;
  logger: FastifyBaseLogger;
  registry: ProcessorRegistry;
  targets: NotificationTargets;
}) {
  async function apply(accountId: string, notification: ProcessorNotification): Promise<Applied> {
    switch (notification.kind) {
      case 'authorisation':
        return targets.authorisation(accountId, notification.paymentId, notification.outcome);
      case 'capture':
        return targets.capture(accountId, notification.paymentId, notification.success, notification.reason);
      case 'refund':
        return targets.refund(
          accountId,
          notification.refundId,
          notification.success ? { kind: 'succeeded' } : { kind: 'failed', reason: notification.reason ?? 'declined' },
        );
      case 'dispute':
        return targets.dispute(accountId, notification);
      // A cancellation confirms a hold Tessera released itself; the rest Tessera has no use for.
      case 'cancellation':
      case 'ignored':
        return 'ignored';
    }
  }

  return {
    async receive(
      accountId: string,
      headers: Record<string, string | undefined>,
      rawBody: string,
    ): Promise<NotificationAnswer> {
      const found = await registry.account(accountId);
      if (!found) return { status: 404, contentType: 'text/plain', body: 'unknown processor account' };
      let batch;
      try {
        batch = found.connector.parseNotification({ headers, rawBody });
      } catch (err) {
        const refused = err instanceof NotificationRefused;
        logger.warn(
          { accountId, processor: found.row.processor, reason: (err as Error).message },
          refused
            ? 'processor notification refused: its signature does not verify'
            : 'processor notification unreadable',
        );
        return refused
          ? { status: 401, contentType: 'text/plain', body: 'signature does not verify' }
          : { status: 400, contentType: 'text/plain', body: 'notification not understood' };
      }
      for (const notification of batch.notifications) {
        const [seen] = await db.query(
          'SELECT 1 FROM processor_notifications WHERE account_id = $1 AND notification_id = $2',
          [accountId, notification.id],
        );
        if (seen) continue;
        const outcome = await apply(accountId, notification);
        await queries.claimNotification(db, accountId, notification.id, notification.kind, clock.now());
        logger.info(
          { accountId, notificationId: notification.id, kind: notification.kind, outcome },
          'processor notification received',
        );
      }
      await queries.markNotified(db, accountId, clock.now());
      return { status: 200, ...batch.answer };
    },
  };
}

export type NotificationReceiver = ReturnType<typeof createNotificationReceiver>;
