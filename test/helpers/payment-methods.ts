/**
 * What the payment method test files share (test/payment-methods*.test.ts): a card body, creating a
 * method or a customer, a refusal that quotes no card number, and a method's stored row.
 */
import assert from 'node:assert/strict';
import type { TestContext, TestMerchant } from './harness.js';

export const visa = '4242424242424242';

export function cardBody(card: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  return {
    type: 'card',
    card: { cardNo: visa, expMonth: '04', expYear: '2030', securityCode: '123', ...card },
    ...extra,
  };
}

export async function createMethod(merchant: TestMerchant, card: Record<string, unknown> = {}, extra = {}) {
  const response = await merchant.call('POST', '/payment_methods/create', cardBody(card, extra));
  assert.equal(response.status, 200, response.raw);
  return response.body.data;
}

export async function createCustomer(merchant: TestMerchant) {
  const response = await merchant.call('POST', '/customers/create', { email: 'holder@example.com' });
  assert.equal(response.status, 200, response.raw);
  return response.body.data as { id: string };
}

/** Asserts a 400 invalid_request naming `param` whose answer quotes no card number. */
export async function assertRefused(
  merchant: TestMerchant,
  body: unknown,
  param: string,
  path = '/payment_methods/create',
) {
  const response = await merchant.call('POST', path, body);
  assert.equal(response.status, 400, `${param}: ${response.raw}`);
  assert.equal(response.body.code, 'invalid_request');
  assert.equal(response.body.data.param, param, response.raw);
  assert.ok(response.body.msg.includes(param), response.body.msg);
  const card = (body as { card?: { cardNo?: unknown } }).card;
  if (typeof card?.cardNo === 'string' && card.cardNo.length >= 6) {
    assert.ok(!response.raw.includes(card.cardNo), 'the answer does not quote the card number');
    assert.ok(!response.raw.includes(card.cardNo.slice(0, 6)), 'the answer does not quote a part of the card number');
  }
  return response;
}

/** A payment method's row as stored, every column as text. */
export async function storedRow(ctx: TestContext, id: string): Promise<string> {
  const [row] = await ctx.tessera.db.query<{ text: string }>(
    'SELECT row_to_json(pm)::text AS text FROM payment_methods pm WHERE id = $1',
    [id],
  );
  assert.ok(row, `row ${id} exists`);
  return row.text;
}
