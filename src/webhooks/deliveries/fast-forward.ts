import { Type, type Static } from 'typebox';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/db.js';
import type { MerchantContext } from '../../core/merchant-context.js';
import { DomainError, notFound } from '../../core/errors.js';
import * as queries from './queries.js';
import { toWebhookDelivery } from './service.js';

/*
 * Test-mode fast-forward (issue 12): a delivery's remaining retry schedule runs compressed, each
 * wait divided by a factor, so that a merchant can watch all 13 attempts and the give-up in
 * seconds. The engine's recorder applies the factor when it computes the next attempt
 * (nextAttemptAfter); nothing else sends.
 */

export const defaultTimeFactor = 3600;
/** At most: a day's waits in 2.5 s; the schedule's 25 hours (docs/webhooks.md#acknowledgement-and-retries) in about a second. */
export const maxTimeFactor = 86_400;

export const FastForwardBody = Type.Object(
  {
    factor: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: maxTimeFactor,
        description:
          `Each remaining wait is divided by this (default ${defaultTimeFactor}: the 25 hours of docs/webhooks.md#acknowledgement-and-retries take 25 s; ` +
          `1 … ${maxTimeFactor}).`,
      }),
    ),
  },
  { additionalProperties: false },
);
export type FastForwardBody = Static<typeof FastForwardBody>;

export function createFastForward({ db, clock, wake }: { db: Db; clock: Clock; wake: () => void }) {
  return {
    async fastForward(merchant: MerchantContext, id: string, input: FastForwardBody) {
      if (merchant.mode !== 'test') {
        throw new DomainError(
          'permission_denied',
          'fast_forward is for test mode only: live deliveries keep the docs/webhooks.md#acknowledgement-and-retries schedule',
          { param: 'id', rule: 'test_mode_only' },
        );
      }
      const factor = input.factor ?? defaultTimeFactor;
      const now = clock.now();
      // The wait already under way is compressed too: the next attempt falls due at once. Not so for
      // a delivery of a recover's chain still waiting for the one before it (docs/decisions/0030):
      // it has no time to bring forward (LEAST would take $5 for its NULL) and keeps its place.
      const [row] = await db.query<{ id: string }>(
        `UPDATE webhook_deliveries
         SET time_factor = $4, updated_at = $5,
             next_attempt_at = CASE WHEN follows IS NULL THEN LEAST(next_attempt_at, $5) ELSE next_attempt_at END
         WHERE id = $1 AND merchant_id = $2 AND mode = $3 AND status = 'pending' RETURNING id`,
        [id, merchant.merchantId, merchant.mode, factor, now],
      );
      const current = await queries.selectDelivery(db, merchant.merchantId, merchant.mode, id);
      if (!current) throw notFound('webhook delivery', id);
      if (!row) {
        throw new DomainError(
          'invalid_state',
          `Only a pending delivery can be fast-forwarded; this one has ${current.status} (resend it to start again)`,
          { param: 'id' },
        );
      }
      wake();
      return toWebhookDelivery(current);
    },
  };
}

export type FastForward = ReturnType<typeof createFastForward>;
