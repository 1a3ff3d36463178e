/**
 * The dashboard's dispute tests share this: a merchant with a signed-in Owner, its API called with
 * its private key, and a sandbox dispute card's payment with its dispute once the follow-up delay
 * has passed (docs/disputes.md, Sandbox).
 */
import assert from 'node:assert/strict';
import type { TestContext } from './harness.js';
import { acceptLink, dashboardClient, type DashboardClient } from './dashboard.js';

export type MerchantApi = (method: 'GET' | 'POST', path: string, body?: unknown) => Promise<any>;

export interface DisputeShop {
  merchantId: string;
  /** The Owner, signed in over HTTP. */
  owner: DashboardClient;
  /** The merchant API with the shop's private key: the answer's `data`, after asserting 200. */
  api: MerchantApi;
}

/** A merchant whose Owner (`ownerEmail`) has set `password` and is signed in. */
export async function disputeShop(
  ctx: TestContext,
  name: string,
  ownerEmail: string,
  password: string,
): Promise<DisputeShop> {
  const created = await ctx.tessera.server.inject({
    method: 'POST',
    url: '/admin/v1/merchants/create',
    headers: { authorization: `Bearer ${ctx.operatorKey}`, 'content-type': 'application/json' },
    payload: JSON.stringify({ name, tokenization: true, ownerEmail }),
  });
  assert.equal(created.statusCode, 200, created.body);
  const merchant = created.json().data;
  const owner = dashboardClient(ctx);
  assert.equal((await acceptLink(owner, merchant.ownerSetPasswordUrl, password)).status, 303);
  const api: MerchantApi = async (method, path, body) => {
    const answer = await ctx.tessera.server.inject({
      method,
      url: `/api/services/v1${path}`,
      headers: {
        authorization: `Bearer ${merchant.keys.privateKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    assert.equal(answer.statusCode, 200, answer.body);
    return answer.json().data;
  };
  return { merchantId: merchant.id, owner, api };
}

/**
 * A succeeded payment of `amount` with the sandbox dispute card `cardNo`, and its dispute once the
 * clock has passed the follow-up delay and the jobs have run.
 */
export async function sandboxDispute(
  ctx: TestContext,
  api: MerchantApi,
  cardNo: string,
  options: { amount: string; followUpDelayMs: number },
): Promise<{ paymentId: string; dispute: any }> {
  const method = await api('POST', '/payment_methods/create', {
    type: 'card',
    card: { cardNo, expMonth: '12', expYear: '2030', securityCode: '123' },
  });
  const payment = await api('POST', '/payment/create', {
    amount: options.amount,
    currency: 'USD',
    confirm: true,
    paymentMethod: method.id,
  });
  assert.equal(payment.status, 'succeeded');
  ctx.clock.advance(options.followUpDelayMs);
  await ctx.runJobs();
  const [dispute] = (await api('GET', `/disputes?paymentId=${payment.id}`)).data;
  assert.ok(dispute, 'the dispute opened');
  return { paymentId: payment.id, dispute };
}
