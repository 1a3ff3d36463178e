/**
 * What the Stripe connector's tests share: a connector pointed at the Stripe stand-in, an
 * authorization request per test, and assertions over outcomes.
 */
import assert from 'node:assert/strict';
import { manualClock } from '../../src/clock.js';
import type { AuthorizeOutcome, AuthorizeRequest, LiveProcessor } from '../../src/processor/processor.js';
import { createStripeProcessor } from '../../src/processor/stripe/connector.js';
import type { StripeStandIn } from './stripe-stand-in.js';

/** The clock notifications are judged by (300 s tolerance). */
export const clock = manualClock();
let sequence = 0;

export function processorFor(server: StripeStandIn, timeoutMs: number, secretKey = server.secretKey): LiveProcessor {
  return createStripeProcessor({
    secretKey,
    webhookSecret: server.webhookSecret,
    baseUrl: server.url,
    timeoutMs,
    clock,
  });
}

/** A new payment's authorization (its own payment id and idempotency key). */
export function request(number: string, changes: Partial<AuthorizeRequest> = {}): AuthorizeRequest {
  sequence += 1;
  const paymentId = `pt_${String(sequence).padStart(19, '0')}`;
  return {
    paymentId,
    idempotencyKey: `${paymentId}.authorize`,
    amount: 1999n,
    currency: 'USD',
    card: { number, brand: 'visa', expMonth: '04', expYear: '2030', securityCode: '123', holderName: null },
    capture: true,
    initiator: 'one_off',
    recurring: false,
    networkTransactionId: null,
    threeDSecure: 'not_requested',
    customerId: null,
    orderNo: null,
    returnUrl: `http://127.0.0.1:1/3ds/${paymentId}/return?secret=pt_secret`,
    ...changes,
  };
}

/** What the connector sent for this idempotency key (the card number masked by the stand-in). */
export function sent(standIn: StripeStandIn, idempotencyKey: string): any {
  const found = standIn.requests.filter((recorded) => recorded.idempotencyKey === idempotencyKey);
  assert.ok(found.length > 0, `no request with the key ${idempotencyKey}`);
  return found[found.length - 1]!.params;
}

export function shown(value: unknown): string {
  return JSON.stringify(value, (_key, item) => (typeof item === 'bigint' ? String(item) : item));
}

export function approved(outcome: AuthorizeOutcome): Extract<AuthorizeOutcome, { kind: 'approved' }> {
  assert.equal(outcome.kind, 'approved', `expected approval, got ${shown(outcome)}`);
  return outcome as Extract<AuthorizeOutcome, { kind: 'approved' }>;
}

export function declined(outcome: AuthorizeOutcome): Extract<AuthorizeOutcome, { kind: 'declined' }> {
  assert.equal(outcome.kind, 'declined', `expected a decline, got ${shown(outcome)}`);
  return outcome as Extract<AuthorizeOutcome, { kind: 'declined' }>;
}

export async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (caught) {
    assert.ok(caught instanceof Error);
    return caught;
  }
  assert.fail('expected the call to throw');
}
