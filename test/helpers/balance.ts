/**
 * What the balance test files share (payouts, payout cancel, disputes): a card payment that
 * succeeds, the operator's merchant update, and reading the balance and an object's events.
 */
import assert from 'node:assert/strict';
import { injectRaw, type TestContext, type TestMerchant } from './harness.js';

/** A confirmed card payment in USD, asserted succeeded. */
export async function payByCard(
  merchant: TestMerchant,
  { amount, cardNo = '4242424242424242', orderNo }: { amount: string; cardNo?: string; orderNo?: string },
) {
  const method = await merchant.call('POST', '/payment_methods/create', {
    type: 'card',
    card: { cardNo, expMonth: '12', expYear: '2030', securityCode: '123' },
  });
  const payment = await merchant.call('POST', '/payment/create', {
    amount,
    currency: 'USD',
    paymentMethod: method.body.data.id,
    confirm: true,
    ...(orderNo ? { orderNo } : {}),
  });
  assert.equal(payment.body.data?.status, 'succeeded', payment.raw);
  return payment.body.data as { id: string };
}

/** The operator's update of a merchant (availability, payout schedule, bank account), asserted 200. */
export async function operatorUpdate(ctx: TestContext, merchant: TestMerchant, body: unknown) {
  const response = await injectRaw(ctx, {
    method: 'POST',
    url: `/admin/v1/merchants/${merchant.id}/update`,
    headers: { authorization: `Bearer ${ctx.operatorKey}`, 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  });
  assert.equal(response.statusCode, 200, response.body);
}

/** The `data` of a merchant API GET, asserted 200. */
export async function getData(merchant: TestMerchant, path: string) {
  const answer = await merchant.call('GET', path);
  assert.equal(answer.status, 200, answer.raw);
  return answer.body.data;
}

/** The merchant's available USD balance, in minor units. */
export async function availableUsd(merchant: TestMerchant): Promise<string> {
  const balance = await getData(merchant, '/balance');
  return balance.available.find((row: { currency: string }) => row.currency === 'USD')?.amount ?? '0';
}

/** The types of an object's events, oldest first. */
export async function eventTypes(merchant: TestMerchant, objectId: string): Promise<string[]> {
  const events = await getData(merchant, `/events?objectId=${objectId}&limit=100`);
  return events.data.map((event: { type: string }) => event.type).reverse();
}
