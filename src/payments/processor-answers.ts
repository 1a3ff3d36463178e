/**
 * What a real processor tells after its first answer (docs/processors.md, Notifications and
 * 3-D Secure): an authorization's outcome by notification, a capture's, and the shopper's return
 * from the processor's own 3-D Secure page. Each is applied by the same conditional changes as
 * the API's own answers, so whichever of a notification and an answer comes first wins and the
 * other changes nothing.
 */
import type { AuthorizeOutcome } from '../processor/processor.js';
import { recordCapture } from './actions.js';
import { recordAuthorization } from './authorize.js';
import type { PaymentContext } from './context.js';
import * as queries from './queries.js';
import { changeStatus, ignoreConflict } from './state-changes.js';

type Settled = Extract<AuthorizeOutcome, { kind: 'approved' } | { kind: 'declined' }>;

/** A payment held in processing for its capture still has its whole amount capturable. */
const awaitsCapture = (row: queries.PaymentRow) => row.status === 'processing' && BigInt(row.amount_capturable) > 0n;

/** The payment, if it went through this processor account; null otherwise (a reference from elsewhere). */
async function paymentOfAccount(
  ctx: Pick<PaymentContext, 'db'>,
  accountId: string,
  paymentId: string,
): Promise<queries.PaymentRow | null> {
  const row = await queries.selectPaymentById(ctx.db, paymentId);
  return row !== undefined && row.processor_account_id === accountId ? row : null;
}

/** An authorization's outcome told by notification: recorded if the payment still waits for it. */
export async function applyAuthorizationNotice(
  ctx: PaymentContext,
  accountId: string,
  paymentId: string,
  outcome: Settled,
): Promise<'applied' | 'ignored'> {
  const row = await paymentOfAccount(ctx, accountId, paymentId);
  if (!row || awaitsCapture(row)) return 'ignored';
  let claimed: queries.PaymentRow | undefined = row;
  // The notification came before the shopper came back from the processor's 3-D Secure page.
  if (row.status === 'requires_action') {
    claimed = await changeStatus(ctx.db, row.id, 'completeChallenge', { status: 'processing' }, ctx.clock.now());
  }
  if (!claimed || claimed.status !== 'processing') return 'ignored';
  const recorded = await recordAuthorization(
    ctx,
    claimed,
    await withNetworkReference(ctx, claimed, outcome),
    true,
  ).catch(ignoreConflict);
  return recorded ? 'applied' : 'ignored';
}

/**
 * A notification may carry no network reference (Stripe's names its charge only by id): the
 * processor is asked for the payment as it stands, since a stored card needs the reference for
 * its later CIT and MIT. Without an answer the notification's outcome stands as it is.
 */
async function withNetworkReference(ctx: PaymentContext, row: queries.PaymentRow, outcome: Settled): Promise<Settled> {
  if (outcome.kind !== 'approved' || outcome.networkTransactionId !== '') return outcome;
  try {
    const current = await (
      await ctx.processors.of(row)
    ).completeRedirect({
      paymentId: row.id,
      processorReference: outcome.processorReference,
      params: {},
      idempotencyKey: `${row.id}.details`,
    });
    return current.kind === 'approved' ? current : outcome;
  } catch {
    return outcome;
  }
}

/** A capture's outcome told by notification (the connector answered the capture 'pending'). */
export async function applyCaptureNotice(
  ctx: PaymentContext,
  accountId: string,
  paymentId: string,
  success: boolean,
  reason: string | null,
): Promise<'applied' | 'ignored'> {
  const row = await paymentOfAccount(ctx, accountId, paymentId);
  if (!row || !awaitsCapture(row)) return 'ignored';
  const recorded = await recordCapture(
    ctx,
    row,
    success
      ? { kind: 'captured' }
      : { kind: 'failed', code: 'processing_error', message: reason ?? 'The processor could not capture the payment.' },
  ).catch(ignoreConflict);
  return recorded ? 'applied' : 'ignored';
}

/**
 * The shopper came back from a processor's 3-D Secure page with `params`: the processor is asked
 * for the outcome and it is recorded. Without a usable answer the payment stays processing, and
 * the processor's notification tells the outcome. Returns null for a wrong id or secret.
 */
export async function completeRedirect(
  ctx: PaymentContext,
  paymentId: string,
  params: Record<string, string>,
): Promise<queries.PaymentRow | null> {
  const row = await queries.selectPaymentById(ctx.db, paymentId);
  if (!row) return null;
  if (row.status !== 'requires_action' || row.next_action === null) return row;
  const claimed = await changeStatus(ctx.db, row.id, 'completeChallenge', { status: 'processing' }, ctx.clock.now());
  if (!claimed) return (await queries.selectPaymentById(ctx.db, row.id)) ?? row;
  const processor = await ctx.processors.of(claimed);
  let outcome: AuthorizeOutcome;
  try {
    outcome = await processor.completeRedirect({
      paymentId: claimed.id,
      processorReference: claimed.processor_reference,
      params,
      idempotencyKey: `${claimed.id}.details`,
    });
  } catch (err) {
    ctx.logger.warn(
      { paymentId: claimed.id, processor: processor.name, reason: (err as Error).message },
      'the processor gave no usable answer after 3-D Secure; the payment stays processing until its notification',
    );
    return claimed;
  }
  return recordAuthorization(ctx, claimed, outcome, true).catch(async (err: unknown) => {
    // The notification recorded the outcome first: show the payment as it is now.
    ignoreConflict(err);
    return (await queries.selectPaymentById(ctx.db, claimed.id)) ?? claimed;
  });
}
