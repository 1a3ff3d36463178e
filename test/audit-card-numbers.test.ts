import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { databaseKind, injectRaw, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';
import { runCli } from './helpers/cli-process.js';

/**
 * `tessera audit card-numbers` finds card numbers stored in free text before the guard refused
 * them (docs/decisions/0045-card-numbers-in-free-text.md): such rows are made here by writing to
 * the database directly, as an older version of the service would have.
 */
describe(`audit of card numbers in stored free text (${databaseKind})`, () => {
  let ctx: TestContext;
  let shop: TestMerchant;
  let other: TestMerchant;
  let url: string;
  let paymentId: string;
  let customerId: string;
  let refundId: string;

  before(async () => {
    ctx = await startTestApp();
    shop = await ctx.merchant();
    other = await ctx.merchant();
    const method = await shop.call('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    const payment = await shop.call('POST', '/payment/create', {
      amount: '1000',
      currency: 'USD',
      paymentMethod: method.body.data.id,
      confirm: true,
      orderNo: '4111111111111111',
      description: 'Blue hat',
      lineItems: [{ name: 'Hat' }, { name: 'Scarf' }],
    });
    assert.equal(payment.status, 200, payment.raw);
    paymentId = payment.body.data.id;
    const refund = await shop.call('POST', '/refunds/create', { paymentId, amount: '100', metadata: { ref: 'a' } });
    assert.equal(refund.status, 200, refund.raw);
    refundId = refund.body.data.id;
    const customer = await other.call('POST', '/customers/create', {
      firstName: 'Ada',
      merchantUserId: '5105105105105100',
    });
    assert.equal(customer.status, 200, customer.raw);
    customerId = customer.body.data.id;
    // Rows as a version without the guard stored them.
    await ctx.tessera.db.query(
      `UPDATE payments SET details = jsonb_set(details, '{lineItems,1,name}', '"Scarf, card 4242 4242 4242 4242"') WHERE id = $1`,
      [paymentId],
    );
    await ctx.tessera.db.query(`UPDATE refunds SET metadata = '{"ref": "5555-5555-5555-4444"}' WHERE id = $1`, [
      refundId,
    ]);
    await ctx.tessera.db.query(`UPDATE customers SET last_name = '378282246310005' WHERE id = $1`, [customerId]);
    await ctx.tessera.server.listen({ port: 0, host: '127.0.0.1' });
    url = `http://127.0.0.1:${(ctx.tessera.server.server.address() as AddressInfo).port}`;
  });
  after(() => ctx.close());

  type Finding = { merchantId: string; object: string; id: string; field: string; masked: string };
  const ofMerchant = (findings: Finding[], merchantId: string) =>
    findings.filter((finding) => finding.merchantId === merchantId).map(({ merchantId: _, ...rest }) => rest);

  test('the operator API lists each stored value masked, per merchant, leaving orderNo and merchantUserId', async () => {
    const response = await injectRaw(ctx, {
      method: 'GET',
      url: '/admin/v1/audit/card_numbers',
      headers: { authorization: `Bearer ${ctx.operatorKey}` },
    });
    assert.equal(response.statusCode, 200, response.body);
    assert.doesNotMatch(
      response.body,
      /4242[ -]?4242[ -]?4242[ -]?4242|5555[ -]?5555|378282246310005|4111111111111111/,
    );
    const findings = response.json().data.data as Finding[];
    assert.deepEqual(ofMerchant(findings, shop.id), [
      { mode: 'test', object: 'payment', id: paymentId, field: 'lineItems[1].name', masked: 'Scarf, card •••• 4242' },
      { mode: 'test', object: 'refund', id: refundId, field: 'metadata.ref', masked: '•••• 4444' },
    ]);
    assert.deepEqual(ofMerchant(findings, other.id), [
      { mode: 'test', object: 'customer', id: customerId, field: 'lastName', masked: '•••• 0005' },
    ]);
  });

  test('the merchant keys cannot read it', async () => {
    const response = await injectRaw(ctx, {
      method: 'GET',
      url: '/admin/v1/audit/card_numbers',
      headers: { authorization: `Bearer ${shop.privateKey}` },
    });
    assert.equal(response.statusCode, 401);
  });

  test('tessera audit card-numbers prints them per merchant, masked, and exits 1', async () => {
    const result = await runCli(['audit', 'card-numbers'], { TESSERA_URL: url, TESSERA_ADMIN_KEY: ctx.operatorKey });
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stdout, new RegExp(`${shop.id}: 2 values`));
    assert.match(result.stdout, new RegExp(`${other.id}: 1 value\\b`));
    assert.match(result.stdout, /lineItems\[1\]\.name\s+Scarf, card •••• 4242/);
    assert.doesNotMatch(result.stdout, /4242 4242|5555-5555|378282246310005/);
  });
});
