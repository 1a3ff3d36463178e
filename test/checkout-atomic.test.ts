/**
 * docs/checkout.md, paid at most once: the session is completed in the transaction that records its
 * payment's success (src/payments/checkout-hook.ts), and no second payment of a session can go
 * through, even when the page's two-minute hold on an attempt has run out.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AuthorizeRequest, CancelRequest, Processor } from '../src/processor/processor.js';
import { createSandboxProcessor } from '../src/processor/sandbox.js';
import { databaseKind, injectRaw, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';

/** The sandbox, with its next authorization held back until the test lets it answer. */
function gatedSandbox() {
  const sandbox = createSandboxProcessor({ followUpDelayMs: 3000 });
  const canceled: string[] = [];
  let gate: { reached: () => void; release: Promise<void> } | null = null;
  const processor: Processor = {
    ...sandbox,
    async authorize(request: AuthorizeRequest) {
      const outcome = await sandbox.authorize(request);
      const held = gate;
      gate = null;
      if (held) {
        held.reached();
        await held.release;
      }
      return outcome;
    },
    async cancel(request: CancelRequest) {
      canceled.push(request.paymentReference);
      return sandbox.cancel(request);
    },
  };
  /** Holds the next authorization's answer: resolves once it is held; call the result to let it go. */
  function holdNext(): { held: Promise<void>; release: () => void } {
    let release!: () => void;
    let reached!: () => void;
    const held = new Promise<void>((resolve) => (reached = resolve));
    gate = { reached, release: new Promise<void>((resolve) => (release = resolve)) };
    return { held, release };
  }
  return { processor, canceled, holdNext };
}

describe(`checkout session completed with its payment (${databaseKind})`, () => {
  let ctx: TestContext;
  const gated = gatedSandbox();

  before(async () => {
    ctx = await startTestApp({ processor: gated.processor });
  });
  after(async () => ctx.close());

  async function session(shop: TestMerchant) {
    // No orderNo: the payments' unique orderNo would refuse a second payment on its own.
    const response = await shop.call('POST', '/checkout/session/create', {
      amountTotal: '1500',
      currency: 'USD',
      returnUrl: 'https://shop.example/done',
    });
    assert.equal(response.status, 200, response.raw);
    return response.body.data as { id: string };
  }

  function postCard(id: string, cardNo: string) {
    return injectRaw(ctx, {
      method: 'POST',
      url: `/checkout/${id}/pay`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ cardNo, expiry: '12/30', securityCode: '123', name: 'Ada Lovelace' }).toString(),
    });
  }

  const paymentIdOf = (location: unknown) => new URL(String(location)).searchParams.get('payment_id');

  test('a tab whose payment outlives the page hold cannot pay a session another tab paid meanwhile', async () => {
    const shop = await ctx.merchant();
    const s = await session(shop);
    const slow = gated.holdNext();
    const first = postCard(s.id, '4242424242424242');
    await slow.held;
    // The first tab's payment is with the processor longer than the page's hold (2 minutes):
    // a second tab may now try, and pays.
    ctx.clock.advance(2 * 60 * 1000 + 1000);
    const second = await postCard(s.id, '5555555555554444');
    assert.equal(second.statusCode, 303);
    const paidBy = paymentIdOf(second.headers.location);
    assert.match(String(paidBy), /^pt_\d{19}$/);
    const canceledBefore = gated.canceled.length;
    slow.release();
    const late = await first;

    // The late tab is sent to the shop with the payment that did pay the session.
    assert.equal(late.statusCode, 303, late.body);
    assert.equal(paymentIdOf(late.headers.location), paidBy);
    const payments = (await shop.call('GET', '/payment?limit=100')).body.data.data;
    assert.deepEqual(
      payments.map((payment: { id: string; status: string }) => [payment.id, payment.status]),
      [[paidBy, 'succeeded']],
    );
    // The late authorization was released at the processor, not left hanging.
    assert.equal(gated.canceled.length, canceledBefore + 1);
    const seen = (await shop.call('GET', `/checkout/session/${s.id}`)).body.data;
    assert.equal(seen.status, 'complete');
    assert.equal(seen.paymentId, paidBy);
  });

  test('the session is complete as soon as its payment is, before the page answers the shopper', async () => {
    const shop = await ctx.merchant();
    const s = await session(shop);
    const slow = gated.holdNext();
    // The answer is held after the processor approved; the page has not answered yet. Nothing
    // is recorded yet either: payment and session are written together, after the answer.
    const paying = postCard(s.id, '4242424242424242');
    await slow.held;
    const during = (await shop.call('GET', '/checkout/session')).body.data.data[0];
    assert.equal(during.status, 'open');
    assert.equal((await shop.call('GET', '/payment')).body.data.data.length, 0);
    slow.release();
    const paid = await paying;
    const paymentId = paymentIdOf(paid.headers.location);
    // The list reads rows as stored (nothing is completed on read): the payment's transaction did it.
    const listed = (await shop.call('GET', '/checkout/session')).body.data.data[0];
    assert.equal(listed.id, s.id);
    assert.equal(listed.status, 'complete');
    assert.equal(listed.paymentId, paymentId);
  });

  test('a 3-D Secure challenge passed after the shopper left completes the session by itself', async () => {
    const shop = await ctx.merchant();
    const s = await session(shop);
    const posted = await postCard(s.id, '4000002500003155');
    const challenge = String(posted.headers.location);
    const paymentId = /\/3ds\/(pt_\d{19})/.exec(challenge)![1]!;
    const target = new URL(challenge, 'http://localhost');
    const page = await injectRaw(ctx, { method: 'GET', url: `${target.pathname}${target.search}` });
    const action = /<form method="post" action="([^"]+)"/.exec(page.body)![1]!;
    const secret = /name="secret" value="([^"]+)"/.exec(page.body)![1]!.replace(/&#95;/g, '_');
    const answered = await injectRaw(ctx, {
      method: 'POST',
      url: action,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ secret, outcome: 'pass' }).toString(),
    });
    assert.equal(answered.statusCode, 303, answered.body);
    // The shopper never follows the redirect back to the checkout page: the list, which
    // completes nothing on read, already shows the session paid.
    const listed = (await shop.call('GET', '/checkout/session')).body.data.data[0];
    assert.equal(listed.status, 'complete');
    assert.equal(listed.paymentId, paymentId);
  });

  test('a payment that settles later completes the session at once, with its processing event', async () => {
    const shop = await ctx.merchant();
    const s = await session(shop);
    const posted = await postCard(s.id, '4000000000000630');
    const paymentId = paymentIdOf(posted.headers.location);
    assert.equal((await shop.call('GET', `/payment/${paymentId}`)).body.data.status, 'processing');
    const listed = (await shop.call('GET', '/checkout/session')).body.data.data[0];
    assert.equal(listed.status, 'complete');
    assert.equal(listed.paymentId, paymentId);
  });
  test('the expiry waits for a form post whose payment is with the processor; the payment completes the session', async () => {
    const shop = await ctx.merchant();
    const expiresAt = new Date(ctx.clock.now().getTime() + 30 * 60 * 1000).toISOString();
    const created = await shop.call('POST', '/checkout/session/create', {
      amountTotal: '1500',
      currency: 'USD',
      returnUrl: 'https://shop.example/done',
      expiresAt,
    });
    const id = created.body.data.id as string;
    ctx.clock.advance(29 * 60 * 1000);
    const slow = gated.holdNext();
    const paying = postCard(id, '4242424242424242');
    await slow.held;
    ctx.clock.advance(60 * 1000 + 1);
    await ctx.runJobs();
    assert.equal((await shop.call('GET', `/checkout/session/${id}`)).body.data.status, 'open');
    slow.release();
    const paid = await paying;
    const paymentId = paymentIdOf(paid.headers.location);
    const seen = (await shop.call('GET', `/checkout/session/${id}`)).body.data;
    assert.equal(seen.status, 'complete');
    assert.equal(seen.paymentId, paymentId);
    // The expiry, rescheduled for the end of the post's hold, finds the session paid.
    ctx.clock.advance(2 * 60 * 1000);
    await ctx.runJobs();
    assert.equal((await shop.call('GET', `/checkout/session/${id}`)).body.data.status, 'complete');
  });

  test('a session the merchant expires while its payment is with the processor: the shopper still returns to the shop', async () => {
    const shop = await ctx.merchant();
    const s = await session(shop);
    const slow = gated.holdNext();
    const paying = postCard(s.id, '4242424242424242');
    await slow.held;
    assert.equal((await shop.call('POST', `/checkout/session/${s.id}/expire`, {})).status, 200);
    slow.release();
    const paid = await paying;
    assert.equal(paid.statusCode, 303);
    const paymentId = paymentIdOf(paid.headers.location);
    assert.equal((await shop.call('GET', `/payment/${paymentId}`)).body.data.status, 'succeeded');
    const seen = (await shop.call('GET', `/checkout/session/${s.id}`)).body.data;
    assert.equal(seen.status, 'expired');
    assert.equal(seen.paymentId, null);
  });
});
