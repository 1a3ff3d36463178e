import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AuthorizeOutcome, AuthorizeRequest, CaptureRequest, RefundRequest } from '../src/processor/processor.js';
import { createSandboxProcessor } from '../src/processor/sandbox.js';

const processor = createSandboxProcessor({ followUpDelayMs: 1234 });

const cards = {
  visa: '4242424242424242',
  mastercard: '5555555555554444',
  amex: '378282246310005',
  jcb: '3566002020360505',
  discover: '6011111111111117',
  declined: '4000000000000002',
  alwaysDeclined: '4000000000000077',
  insufficientFunds: '4000000000009995',
  expired: '4000000000000069',
  incorrectCvc: '4000000000000127',
  threeDSecure: '4000002500003155',
  mitDeclined: '4000000000000341',
  settlesLater: '4000000000000630',
  reversedLater: '4000000000000259',
  highRisk: '4000000000004954',
  refundFails: '4000000000005126',
  refundSucceedsAtOnce: '4000000000007726',
};
const storedCredential = 'ntx_storedcredentialreference';

function captureOf(paymentReference: string, amount: bigint): CaptureRequest {
  return { paymentId: 'pt_1', paymentReference, amount, currency: 'USD', idempotencyKey: 'pt_1.capture' };
}

function refundOf(paymentReference: string, amount: bigint): RefundRequest {
  const refundId = 're_1000000000000000001';
  return { paymentId: 'pt_1', paymentReference, refundId, amount, currency: 'USD', idempotencyKey: refundId };
}

function request(number: string, changes: Partial<AuthorizeRequest> = {}): AuthorizeRequest {
  return {
    paymentId: 'pt_1000000000000000001',
    amount: 1999n,
    currency: 'USD',
    card: {
      number,
      brand: 'visa',
      expMonth: '04',
      expYear: '2030',
      securityCode: number.length === 15 ? '1234' : '123',
      holderName: null,
    },
    idempotencyKey: 'pt_1000000000000000001.authorize',
    capture: true,
    initiator: 'one_off',
    recurring: false,
    networkTransactionId: null,
    threeDSecure: 'not_requested',
    customerId: null,
    orderNo: null,
    returnUrl: 'http://127.0.0.1/3ds/pt_1000000000000000001/return',
    ...changes,
  };
}

/** Every string the processor answers, which must never carry the card number or any run of it. */
function assertNoCardData(outcome: unknown, number: string): void {
  const text = JSON.stringify(outcome, (_key, value) => (typeof value === 'bigint' ? String(value) : value));
  const withoutToken = text.replace(/"networkToken":"\d+"/, '');
  assert.ok(!withoutToken.includes(number), 'the outcome contains the card number');
  assert.ok(!withoutToken.includes(number.slice(-4)), 'the outcome contains the last four digits');
  if (typeof outcome === 'object' && outcome !== null && 'processorReference' in outcome) {
    assert.doesNotMatch(String(outcome.processorReference), /\d/, 'the reference contains digits');
  }
}

async function authorize(number: string, changes: Partial<AuthorizeRequest> = {}): Promise<AuthorizeOutcome> {
  const outcome = await processor.authorize(request(number, changes));
  assertNoCardData(outcome, number);
  return outcome;
}

function approved(outcome: AuthorizeOutcome): Extract<AuthorizeOutcome, { kind: 'approved' }> {
  assert.equal(outcome.kind, 'approved', `expected approval, got ${JSON.stringify(outcome)}`);
  return outcome as Extract<AuthorizeOutcome, { kind: 'approved' }>;
}

function declined(outcome: AuthorizeOutcome, code: string): Extract<AuthorizeOutcome, { kind: 'declined' }> {
  assert.equal(outcome.kind, 'declined', `expected a decline, got ${outcome.kind}`);
  const decline = outcome as Extract<AuthorizeOutcome, { kind: 'declined' }>;
  assert.equal(decline.code, code);
  assert.match(decline.message, /^[A-Z3].*\S$/, 'the message is a sentence');
  return decline;
}

describe('sandbox processor', () => {
  for (const [brand, number] of Object.entries({
    visa: cards.visa,
    mastercard: cards.mastercard,
    amex: cards.amex,
    jcb: cards.jcb,
    discover: cards.discover,
  })) {
    test(`approves and captures the ${brand} test card with a passing risk score`, async () => {
      const outcome = approved(await authorize(number));
      assert.equal(outcome.captured, true);
      assert.equal(outcome.followUp, null);
      assert.equal(outcome.networkToken, null);
      assert.match(outcome.processorReference, /^sbx_[a-z]{24}_[a-z]{3}$/);
      assert.match(outcome.networkTransactionId, /^ntx_/);
      assert.equal(outcome.risk.riskMessage, 'risk_pass');
      assert.ok(
        Number.isInteger(outcome.risk.riskScore) && outcome.risk.riskScore >= 0 && outcome.risk.riskScore <= 30,
      );
    });
  }

  test('gives the same card the same risk score on every payment', async () => {
    const first = approved(await authorize(cards.visa));
    const second = approved(await authorize(cards.visa, { initiator: 'first_storing' }));
    assert.deepEqual(first.risk, second.risk);
  });

  test('declines 4000000000000002 with card_declined', async () => {
    const outcome = declined(await authorize(cards.declined), 'card_declined');
    assert.equal(outcome.message, 'The card was declined.');
    assert.match(outcome.processorReference, /^sbx_/);
  });

  test('declines 4000000000000077 with card_declined on every kind of payment', async () => {
    declined(await authorize(cards.alwaysDeclined), 'card_declined');
    declined(await authorize(cards.alwaysDeclined, { initiator: 'first_storing' }), 'card_declined');
    declined(
      await authorize(cards.alwaysDeclined, { initiator: 'cit', networkTransactionId: storedCredential }),
      'card_declined',
    );
    declined(
      await authorize(cards.alwaysDeclined, { initiator: 'mit', networkTransactionId: storedCredential }),
      'card_declined',
    );
  });

  test('declines 4000000000009995 with insufficient_funds', async () => {
    declined(await authorize(cards.insufficientFunds), 'insufficient_funds');
  });

  test('declines 4000000000000069 with expired_card', async () => {
    declined(await authorize(cards.expired), 'expired_card');
  });

  test('declines 4000000000000127 with incorrect_cvc', async () => {
    declined(await authorize(cards.incorrectCvc), 'incorrect_cvc');
  });

  test('declines 4000000000004954 with risk_rejected and the highest risk score', async () => {
    const outcome = declined(await authorize(cards.highRisk), 'risk_rejected');
    assert.deepEqual(outcome.risk, { riskScore: 100, riskMessage: 'risk_rejected' });
  });

  for (const initiator of ['first_storing', 'cit', 'one_off'] as const) {
    test(`challenges 4000002500003155 on a ${initiator} payment, then approves after 3-D Secure passed`, async () => {
      const networkTransactionId = initiator === 'cit' ? storedCredential : null;
      const challenge = await authorize(cards.threeDSecure, { initiator, networkTransactionId });
      assert.equal(challenge.kind, 'challenge');
      assert.equal(challenge.risk.riskMessage, 'risk_pass');
      approved(await authorize(cards.threeDSecure, { initiator, networkTransactionId, threeDSecure: 'passed' }));
    });
  }

  test('declines 4000002500003155 with authentication_failed when 3-D Secure failed', async () => {
    declined(
      await authorize(cards.threeDSecure, { initiator: 'first_storing', threeDSecure: 'failed' }),
      'authentication_failed',
    );
    declined(
      await authorize(cards.threeDSecure, {
        initiator: 'cit',
        networkTransactionId: storedCredential,
        threeDSecure: 'failed',
      }),
      'authentication_failed',
    );
  });

  test('approves MIT on 4000002500003155 without a challenge, even when 3-D Secure is requested', async () => {
    const outcome = approved(
      await authorize(cards.threeDSecure, { initiator: 'mit', networkTransactionId: storedCredential }),
    );
    assert.equal(outcome.networkTransactionId, storedCredential);
    approved(
      await authorize(cards.threeDSecure, {
        initiator: 'mit',
        networkTransactionId: storedCredential,
        threeDSecure: 'requested',
      }),
    );
  });

  test('challenges any card when 3-D Secure is requested on a customer-present payment', async () => {
    assert.equal((await authorize(cards.visa, { threeDSecure: 'requested' })).kind, 'challenge');
    assert.equal(
      (
        await authorize(cards.mastercard, {
          initiator: 'cit',
          networkTransactionId: storedCredential,
          threeDSecure: 'requested',
        })
      ).kind,
      'challenge',
    );
    approved(await authorize(cards.visa, { threeDSecure: 'passed' }));
    declined(await authorize(cards.visa, { threeDSecure: 'failed' }), 'authentication_failed');
  });

  test('approves the storing payment on 4000000000000341 and declines its MIT with card_declined', async () => {
    const storing = approved(await authorize(cards.mitDeclined, { initiator: 'first_storing' }));
    approved(
      await authorize(cards.mitDeclined, { initiator: 'cit', networkTransactionId: storing.networkTransactionId }),
    );
    declined(
      await authorize(cards.mitDeclined, { initiator: 'mit', networkTransactionId: storing.networkTransactionId }),
      'card_declined',
    );
  });

  test('declines MIT without a stored credential with processing_error', async () => {
    const outcome = declined(
      await authorize(cards.visa, { initiator: 'mit', networkTransactionId: null }),
      'processing_error',
    );
    assert.equal(outcome.message, 'MIT requires a stored credential');
  });

  test('leaves 4000000000000630 processing and settles it in a follow-up', async () => {
    const outcome = approved(await authorize(cards.settlesLater));
    assert.deepEqual(outcome.followUp, { kind: 'settle', afterMs: 1234 });
    assert.deepEqual(await processor.resolveFollowUp(outcome.processorReference, 'settle'), { kind: 'succeeded' });
  });

  test('approves 4000000000000259 and reverses it in a follow-up', async () => {
    const outcome = approved(await authorize(cards.reversedLater));
    assert.deepEqual(outcome.followUp, { kind: 'reverse', afterMs: 1234 });
    assert.deepEqual(await processor.resolveFollowUp(outcome.processorReference, 'reverse'), {
      kind: 'reversed',
      code: 'payment_reversed',
      message: 'The payment was reversed by the card issuer',
    });
  });

  test('resolves a follow-up in another processor instance, since all it needs is in the reference', async () => {
    const outcome = approved(await authorize(cards.settlesLater));
    const other = createSandboxProcessor();
    assert.deepEqual(await other.resolveFollowUp(outcome.processorReference, 'settle'), { kind: 'succeeded' });
  });

  test('refuses a follow-up the authorization did not announce', async () => {
    const outcome = approved(await authorize(cards.visa));
    await assert.rejects(processor.resolveFollowUp(outcome.processorReference, 'settle'));
    await assert.rejects(processor.resolveFollowUp('pt_1000000000000000001', 'reverse'));
  });

  test('provisions a network token and a fresh network reference on the first storing payment', async () => {
    const first = approved(await authorize(cards.visa, { initiator: 'first_storing' }));
    const second = approved(await authorize(cards.visa, { initiator: 'first_storing' }));
    for (const outcome of [first, second]) {
      assert.match(outcome.networkToken ?? '', /^4\d{15}$/);
      assert.notEqual(outcome.networkToken, cards.visa);
      assert.match(outcome.networkTransactionId, /^ntx_[a-z]+$/);
    }
    assert.notEqual(first.networkTransactionId, second.networkTransactionId);
    const amexToken = approved(await authorize(cards.amex, { initiator: 'first_storing' })).networkToken;
    assert.match(amexToken ?? '', /^3\d{15}$/);
  });

  test('echoes the stored network reference on CIT and MIT and provisions no token', async () => {
    for (const initiator of ['cit', 'mit'] as const) {
      const outcome = approved(await authorize(cards.visa, { initiator, networkTransactionId: storedCredential }));
      assert.equal(outcome.networkTransactionId, storedCredential);
      assert.equal(outcome.networkToken, null);
    }
  });

  test('holds a pre-authorization until it is captured or canceled', async () => {
    const held = approved(await authorize(cards.visa, { capture: false }));
    assert.equal(held.captured, false);
    assert.deepEqual(await processor.capture(captureOf(held.processorReference, 1999n)), { kind: 'captured' });
    await processor.cancel({
      paymentId: 'pt_1',
      paymentReference: approved(await authorize(cards.visa, { capture: false })).processorReference,
      idempotencyKey: 'pt_1.cancel',
    });
  });

  test('refuses to capture a payment that was already captured or declined', async () => {
    const captured = approved(await authorize(cards.visa));
    assert.equal((await processor.capture(captureOf(captured.processorReference, 1999n))).kind, 'failed');
    const decline = declined(await authorize(cards.declined), 'card_declined');
    assert.equal((await processor.capture(captureOf(decline.processorReference, 1999n))).kind, 'failed');
  });

  test('accepts a refund and settles it as succeeded in a follow-up', async () => {
    const payment = approved(await authorize(cards.visa));
    const refund = await processor.refund(refundOf(payment.processorReference, 500n));
    assert.equal(refund.kind, 'accepted');
    assert.ok(refund.kind === 'accepted');
    assert.deepEqual(refund.followUp, { afterMs: 1234 });
    assert.match(refund.processorReference, /^sbxre_[a-z]{24}_[a-z]$/);
    // Another instance settles it: all it needs is in the reference.
    assert.deepEqual(await createSandboxProcessor().resolveRefund(refund.processorReference), { kind: 'succeeded' });
  });

  test('accepts a refund of 4000000000005126 and fails it with card_closed in the follow-up', async () => {
    const payment = approved(await authorize(cards.refundFails));
    const refund = await processor.refund(refundOf(payment.processorReference, 500n));
    assert.equal(refund.kind, 'accepted');
    assert.deepEqual(await processor.resolveRefund(refund.processorReference ?? ''), {
      kind: 'failed',
      reason: 'card_closed',
    });
  });

  test('refunds 4000000000007726 at once, a captured pre-authorization too', async () => {
    for (const capture of [true, false]) {
      const payment = approved(await authorize(cards.refundSucceedsAtOnce, { capture }));
      const refund = await processor.refund(refundOf(payment.processorReference, 1999n));
      assert.equal(refund.kind, 'succeeded');
    }
  });

  test('refuses to refund a declined payment, or nothing, as a bug of the caller', async () => {
    const decline = declined(await authorize(cards.declined), 'card_declined');
    await assert.rejects(processor.refund(refundOf(decline.processorReference, 100n)));
    const payment = approved(await authorize(cards.visa));
    await assert.rejects(processor.refund(refundOf(payment.processorReference, 0n)));
    await assert.rejects(processor.resolveRefund(payment.processorReference));
  });

  test('refunds a payment whose reference was made before refunds existed, settling later', async () => {
    const legacy = `sbx_${'q'.repeat(24)}_cn`;
    assert.equal((await processor.refund(refundOf(legacy, 100n))).kind, 'accepted');
  });

  test('puts no digit of any card into a reference', async () => {
    for (const number of Object.values(cards)) {
      for (const initiator of ['one_off', 'first_storing'] as const) {
        const outcome = await authorize(number, { initiator });
        if (outcome.kind !== 'approved' && outcome.kind !== 'declined') continue;
        assert.doesNotMatch(outcome.processorReference, /\d/);
        if (outcome.kind === 'approved') {
          assert.doesNotMatch(outcome.networkTransactionId, /\d/);
          const refund = await processor.refund(refundOf(outcome.processorReference, 100n));
          assert.doesNotMatch(refund.processorReference ?? '', /\d/);
        }
      }
    }
  });
});
