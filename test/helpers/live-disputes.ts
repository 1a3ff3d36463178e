/**
 * What the live-dispute tests share (test/disputes-live.test.ts, test/disputes-respond.test.ts):
 * a merchant whose test keys go through a processor account on the Stripe or Adyen stand-in, a
 * payment through it, and a processor notification posted to the account's webhook path.
 */
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { injectRaw, startTestApp, type TestContext, type TestMerchant } from './harness.js';
import { startAdyenStandIn, type AdyenStandIn } from './adyen-stand-in.js';
import { startStripeStandIn, type StripeStandIn } from './stripe-stand-in.js';

/**
 * Called inside a `describe`: starts both stand-ins and a Tessera before its tests and closes them
 * after; answers them (once started) and the helpers below.
 */
export function liveDisputeSetup() {
  const started: { context?: TestContext; stripe?: StripeStandIn; adyen?: AdyenStandIn } = {};
  before(async () => {
    started.stripe = await startStripeStandIn();
    started.adyen = await startAdyenStandIn();
    started.context = await startTestApp({ env: { TESSERA_PROCESSOR_TIMEOUT_MS: '8000' } });
  });
  after(async () => {
    await started.context?.close();
    await started.stripe?.close();
    await started.adyen?.close();
  });
  const live = {
    get context() {
      return started.context!;
    },
    get stripe() {
      return started.stripe!;
    },
    get adyen() {
      return started.adyen!;
    },
  };
  const helpers = liveDisputeHelpers(
    () => live.context,
    () => live.stripe,
    () => live.adyen,
  );
  return Object.assign(live, helpers);
}

function liveDisputeHelpers(context: () => TestContext, stripe: () => StripeStandIn, adyen: () => AdyenStandIn) {
  /** A merchant whose test keys go through a processor account; answers it and its webhook path. */
  async function merchantWith(processor: 'stripe' | 'adyen') {
    const ctx = context();
    const merchant = await ctx.merchant();
    const settings =
      processor === 'stripe'
        ? {
            credentials: { secretKey: stripe().secretKey, webhookSecret: stripe().webhookSecret },
            baseUrl: stripe().url,
          }
        : {
            credentials: { apiKey: adyen().apiKey, merchantAccount: adyen().merchantAccount, hmacKey: adyen().hmacKey },
            baseUrl: adyen().url,
            disputesBaseUrl: adyen().disputesUrl,
          };
    const account = await injectRaw(ctx, {
      method: 'POST',
      url: `/admin/v1/merchants/${merchant.id}/processor_accounts/create`,
      headers: { authorization: `Bearer ${ctx.operatorKey}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ processor, mode: 'test', ...settings }),
    });
    assert.equal(account.statusCode, 200, account.body);
    return { merchant, webhookPath: new URL(JSON.parse(account.body).data.webhookUrl).pathname };
  }

  /** A confirmed payment of 2500 minor units through the merchant's processor; it must succeed. */
  async function pay(merchant: TestMerchant, cardNo: string, currency: string) {
    const method = await merchant.call('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo, expMonth: '12', expYear: '2030', securityCode: '737' },
    });
    assert.equal(method.status, 200, method.raw);
    const payment = await merchant.call('POST', '/payment/create', {
      amount: '2500',
      currency,
      paymentMethod: method.body.data.id,
      confirm: true,
    });
    assert.equal(payment.body.data?.status, 'succeeded', payment.raw);
    return payment.body.data as { id: string };
  }

  /** A processor's notification posted to the account's webhook path, acknowledged with 200. */
  async function notify(path: string, headers: Record<string, string>, payload: string) {
    const answer = await injectRaw(context(), { method: 'POST', url: path, headers, payload });
    assert.equal(answer.statusCode, 200, answer.body);
  }

  return { merchantWith, pay, notify };
}
