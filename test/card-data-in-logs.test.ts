/**
 * Card data the caller puts where no card field is (a field name, the URL path) and the secrets of
 * hosted pages' links (`?secret=`, `?token=`) appear in no answer and no log line (docs/api.md#responses).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { apiBase, injectRaw, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';

// Two groups of the test card's digits, together or split as the requests write them. (A bare
// 4242 also turns up now and then in random trace ids, which are hex.)
const cardDigits = /4242(?:[\s-]|%20)?4242/;

const cardNumber = '4242424242424242';

describe('card data in logs and errors', () => {
  let ctx: TestContext;
  let merchant: TestMerchant;
  before(async () => {
    ctx = await startTestApp();
    merchant = await ctx.merchant();
  });
  after(() => ctx.close());

  const linesSince = (start: number) => ctx.logLines().slice(start).join('\n');

  test('a card number sent as a field name is named generically, not echoed or logged', async () => {
    const start = ctx.logLines().length;
    const response = await merchant.call('POST', '/customers/create', { [cardNumber]: 1, email: 'a@example.com' });
    assert.equal(response.status, 400);
    assert.equal(response.body.code, 'invalid_request');
    assert.equal(response.body.data.param, 'body');
    assert.match(response.body.msg, /unknown field whose name looks like a card number/);
    const spaced = await merchant.call('POST', '/customers/create', { '4242 4242 4242 4242': 1 });
    assert.equal(spaced.status, 400);
    assert.doesNotMatch(spaced.raw, cardDigits);
    assert.doesNotMatch(response.raw, cardDigits);
    assert.doesNotMatch(linesSince(start), cardDigits);
  });

  test('a card number as a key whose value is refused is masked in param and message', async () => {
    const start = ctx.logLines().length;
    const response = await merchant.call('POST', '/customers/create', {
      email: 'b@example.com',
      metadata: { [cardNumber]: 'a\u0000b' },
    });
    assert.equal(response.status, 400);
    assert.equal(response.body.data.param, 'metadata.[card number]');
    assert.match(response.body.msg, /^metadata\.\[card number\] must not contain a NUL/);
    assert.doesNotMatch(response.raw, cardDigits);
    assert.doesNotMatch(linesSince(start), cardDigits);
  });

  test('a card number in the URL path is masked in the request log line and the answer', async () => {
    const start = ctx.logLines().length;
    for (const path of [
      `/payment/${cardNumber}`,
      '/payment/4242-4242-4242-4242',
      '/nothing/4242%204242%204242%204242',
    ]) {
      const response = await merchant.call('GET', path);
      assert.ok(response.status === 404, `${path}: ${response.status}`);
      assert.doesNotMatch(response.raw, cardDigits);
    }
    const logged = linesSince(start);
    assert.match(logged, /"url":"\/api\/services\/v1\/payment\/\[card number\]"/);
    assert.doesNotMatch(logged, cardDigits);
    // Ids are prefix + 19 digits: they stay readable.
    await merchant.call('GET', '/payment/pay_1234567890123456789');
    assert.match(linesSince(start), /pay_1234567890123456789/);
  });

  test('the secret of a 3-D Secure link and the token of a hosted invoice link are not logged', async () => {
    const start = ctx.logLines().length;
    await injectRaw(ctx, { method: 'GET', url: '/3ds/pay_1234567890123456789?secret=pay-secret-abc123' });
    await injectRaw(ctx, { method: 'GET', url: '/invoice/inv_1234567890123456789?lang=en&token=inv-token-xyz789' });
    await injectRaw(ctx, { method: 'GET', url: `${apiBase}/payment/pay_1?clientSecret=cs-secret-def456` });
    const logged = linesSince(start);
    assert.match(logged, /secret=\[redacted\]/);
    assert.match(logged, /lang=en&token=\[redacted\]/);
    assert.doesNotMatch(logged, /pay-secret-abc123|inv-token-xyz789|cs-secret-def456/);
  });
});
