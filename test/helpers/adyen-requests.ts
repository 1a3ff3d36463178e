/**
 * Tessera's processor requests as the Adyen connector's tests build them (test/adyen-connector.test.ts).
 */

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { AuthorizeOutcome, AuthorizeRequest } from '../../src/processor/processor.js';

/** An authorization of 12.50 EUR with `number`, a fresh payment id and its idempotency key. */
export function paymentRequest(number: string, overrides: Partial<AuthorizeRequest> = {}): AuthorizeRequest {
  const paymentId = `pay_${randomBytes(10).toString('hex')}`;
  return {
    paymentId,
    idempotencyKey: `${paymentId}.authorize`,
    amount: 1250n,
    currency: 'EUR',
    card: { number, brand: 'visa', expMonth: '3', expYear: '30', securityCode: '737', holderName: null },
    capture: true,
    initiator: 'one_off',
    recurring: false,
    networkTransactionId: null,
    threeDSecure: 'not_requested',
    customerId: null,
    orderNo: null,
    returnUrl: `https://tessera.example/v1/payments/${paymentId}/3ds/return`,
    ...overrides,
  };
}

/** The outcome, asserted approved. */
export function approved(outcome: AuthorizeOutcome): Extract<AuthorizeOutcome, { kind: 'approved' }> {
  assert.equal(outcome.kind, 'approved', JSON.stringify(outcome));
  return outcome as Extract<AuthorizeOutcome, { kind: 'approved' }>;
}
