/**
 * docs/checkout.md and issue 14: the hosted checkout page cannot be framed and runs no script but its own, in
 * every state it is answered in; its form may lead only to Tessera and to the shop's returnUrl.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { databaseKind, injectRaw, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';
import { assertInert, assertScriptsUnderNonce } from './helpers/page-safety.js';

type Headers = Record<string, string | string[] | number | undefined>;

function assertLockedDown(headers: Headers, formAction: string, body: string) {
  assert.equal(headers['x-frame-options'], 'DENY');
  const csp = String(headers['content-security-policy']);
  const directives = new Map(
    csp.split(';').map((part) => {
      const [name, ...values] = part.trim().split(/\s+/);
      return [name!, values.join(' ')] as const;
    }),
  );
  assert.equal(directives.get('frame-ancestors'), "'none'");
  // Scripts only under the page's nonce (docs/decisions/0047): no inline script, no other origin, no eval.
  assert.equal(directives.get('default-src'), "'none'");
  assertScriptsUnderNonce(headers, body);
  assertInert(body);
  assert.doesNotMatch(csp, /unsafe-eval|unsafe-inline'? *;? *script/);
  assert.equal(directives.get('form-action'), formAction);
  assert.equal(directives.get('base-uri'), "'none'");
  assert.equal(headers['cache-control'], 'no-store');
  assert.equal(headers['referrer-policy'], 'no-referrer');
  assert.equal(headers['x-content-type-options'], 'nosniff');
}

describe(`hosted checkout page headers (${databaseKind})`, () => {
  let ctx: TestContext;
  let shop: TestMerchant;

  before(async () => {
    ctx = await startTestApp();
    shop = await ctx.merchant();
  });
  after(async () => ctx.close());

  async function session(returnUrl = 'https://shop.example:8443/done?order=1') {
    const created = await shop.call('POST', '/checkout/session/create', {
      amountTotal: '990',
      currency: 'EUR',
      returnUrl,
    });
    assert.equal(created.status, 200, created.raw);
    return created.body.data.id as string;
  }

  const get = (url: string) => injectRaw(ctx, { method: 'GET', url });
  const post = (id: string, fields: Record<string, string>) =>
    injectRaw(ctx, {
      method: 'POST',
      url: `/checkout/${id}/pay`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(fields).toString(),
    });
  const card = (cardNo: string) => ({ cardNo, expiry: '12/30', securityCode: '123', name: 'Ada Lovelace' });

  test("the open page: no framing, no script, the form only to Tessera and the shop's return address", async () => {
    const id = await session();
    const page = await get(`/checkout/${id}`);
    assert.equal(page.statusCode, 200);
    assertLockedDown(page.headers, "'self' https://shop.example:8443", page.body);
    // Only Tessera's own card scripts, as files: nothing inline, no event handler, no javascript: link.
    assert.deepEqual(assertScriptsUnderNonce(page.headers, page.body), [
      '/js/v1/card-input.js',
      '/js/v1/hosted-form.js',
    ]);
    assert.doesNotMatch(page.body, /<script[^>]*>[^<]|\son[a-z]+=|javascript:/i);
  });

  test('a refused form and a declined card are answered with the same headers', async () => {
    const id = await session();
    const refused = await post(id, { ...card('4242424242424241') });
    assert.equal(refused.statusCode, 400);
    assertLockedDown(refused.headers, "'self' https://shop.example:8443", refused.body);
    const declined = await post(id, card('4000000000000002'));
    assert.equal(declined.statusCode, 200);
    assert.match(declined.body, /id="declined"/);
    assertLockedDown(declined.headers, "'self' https://shop.example:8443", declined.body);
  });

  test('a page of no session, and a paid one, are locked down too', async () => {
    const missing = await get('/checkout/cs_0000000000000000001');
    assert.equal(missing.statusCode, 404);
    assertLockedDown(missing.headers, "'self'", missing.body);
    const id = await session('https://shop.example/done');
    const paid = await post(id, card('4242424242424242'));
    assert.equal(paid.statusCode, 303);
    const after = await get(`/checkout/${id}`);
    assert.match(after.body, /has been paid/);
    assertLockedDown(after.headers, "'self' https://shop.example", after.body);
  });
});
