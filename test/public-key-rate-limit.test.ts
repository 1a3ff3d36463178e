/**
 * docs/api.md#base-url-and-authentication: the public-key routes are rate limited per key and per client address (card testing),
 * answering 429 `rate_limited` with Retry-After, readable by the browser (CORS); private keys are not.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../src/config.js';
import { ConfigError } from '../src/config-rules.js';
import { apiBase, injectRaw, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';

const cardBody = () => ({
  type: 'card',
  card: { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' },
  billingDetails: { firstName: 'Ada', lastName: 'Lovelace' },
});

interface From {
  key: string;
  address?: string;
  forwardedFor?: string;
}

/** A public-key read of a payment method (`GET /payment_methods/{id}`), as a shop's page makes it. */
async function read(ctx: TestContext, paymentMethodId: string, from: From) {
  const response = await injectRaw(ctx, {
    method: 'GET',
    url: `${apiBase}/payment_methods/${paymentMethodId}`,
    headers: {
      authorization: `Bearer ${from.key}`,
      origin: 'https://shop.example',
      ...(from.forwardedFor ? { 'x-forwarded-for': from.forwardedFor } : {}),
    },
    remoteAddress: from.address ?? '127.0.0.1',
  });
  return { status: response.statusCode, headers: response.headers, body: response.json() };
}

async function paymentMethodOf(merchant: TestMerchant): Promise<string> {
  const created = await merchant.call('POST', '/payment_methods/create', cardBody());
  assert.equal(created.status, 200, created.raw);
  return created.body.data.id;
}

function assertLimited(response: Awaited<ReturnType<typeof read>>, retryAfterSeconds: number) {
  assert.equal(response.status, 429, JSON.stringify(response.body));
  assert.equal(response.body.code, 'rate_limited');
  assert.match(response.body.msg, /Too many requests/);
  assert.equal(response.headers['retry-after'], String(retryAfterSeconds));
  assert.equal(response.body.data.retryAfter, retryAfterSeconds);
  // The page that called must be able to read the answer and its trace id.
  assert.equal(response.headers['access-control-allow-origin'], '*');
  assert.ok(response.headers['x-traceid']);
}

/** A hosted page's card form posted with a declined card from `address`, as a card tester posts it. */
function postDeclinedCard(ctx: TestContext, url: string, address: string, fields: Record<string, string> = {}) {
  ctx.clock.advance(1);
  return injectRaw(ctx, {
    method: 'POST',
    url,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      ...fields,
      cardNo: '4000000000000002',
      expiry: '12/30',
      securityCode: '123',
      name: 'Card Tester',
    }).toString(),
    remoteAddress: address,
  });
}

describe('public-key rate limit per client address', () => {
  let ctx: TestContext;
  before(async () => {
    // 6 a minute: one token back every 10 seconds.
    ctx = await startTestApp({
      env: {
        TESSERA_RATE_PER_ADDRESS_PER_MINUTE: '6',
        TESSERA_RATE_PER_KEY_PER_MINUTE: '100',
      },
    });
  });
  after(async () => ctx.close());

  test('counts two public keys from one address together, and not another address', async () => {
    const [shopA, shopB] = [await ctx.merchant(), await ctx.merchant()];
    const [methodA, methodB] = [await paymentMethodOf(shopA), await paymentMethodOf(shopB)];
    const address = '198.51.100.7';
    for (let index = 0; index < 3; index += 1) {
      assert.equal((await read(ctx, methodA, { key: shopA.publicKey, address })).status, 200);
      assert.equal((await read(ctx, methodB, { key: shopB.publicKey, address })).status, 200);
    }
    assertLimited(await read(ctx, methodB, { key: shopB.publicKey, address }), 10);
    assertLimited(await read(ctx, methodA, { key: shopA.publicKey, address }), 10);
    // The keys themselves are far from their limit: from another address they still work.
    assert.equal((await read(ctx, methodB, { key: shopB.publicKey, address: '198.51.100.8' })).status, 200);
  });

  test('says when to retry, and lets requests through again as the clock moves', async () => {
    const shop = await ctx.merchant();
    const method = await paymentMethodOf(shop);
    const from = { key: shop.publicKey, address: '198.51.100.20' };
    for (let index = 0; index < 6; index += 1) assert.equal((await read(ctx, method, from)).status, 200);
    assertLimited(await read(ctx, method, from), 10);
    ctx.clock.advance(4_000);
    assertLimited(await read(ctx, method, from), 6);
    ctx.clock.advance(6_000);
    assert.equal((await read(ctx, method, from)).status, 200);
    // One token came back, and it is used: the next must wait its 10 seconds.
    assertLimited(await read(ctx, method, from), 10);
    ctx.clock.advance(60_000);
    for (let index = 0; index < 6; index += 1) assert.equal((await read(ctx, method, from)).status, 200);
  });

  test('does not limit private keys, even from a limited address', async () => {
    const shop = await ctx.merchant();
    const method = await paymentMethodOf(shop);
    const address = '198.51.100.30';
    for (let index = 0; index < 6; index += 1) {
      assert.equal((await read(ctx, method, { key: shop.publicKey, address })).status, 200);
    }
    assertLimited(await read(ctx, method, { key: shop.publicKey, address }), 10);
    for (let index = 0; index < 10; index += 1) {
      assert.equal((await read(ctx, method, { key: shop.privateKey, address })).status, 200);
    }
  });

  test('limits the public-key routes only: a refused route is 403, not counted', async () => {
    const shop = await ctx.merchant();
    const method = await paymentMethodOf(shop);
    const address = '198.51.100.40';
    for (let index = 0; index < 8; index += 1) {
      const refused = await injectRaw(ctx, {
        method: 'GET',
        url: `${apiBase}/customers`,
        headers: { authorization: `Bearer ${shop.publicKey}` },
        remoteAddress: address,
      });
      assert.equal(refused.statusCode, 403);
    }
    assert.equal((await read(ctx, method, { key: shop.publicKey, address })).status, 200);
  });

  test('counts creating a payment method with a public key', async () => {
    const shop = await ctx.merchant();
    const address = '198.51.100.50';
    const create = () =>
      injectRaw(ctx, {
        method: 'POST',
        url: `${apiBase}/payment_methods/create`,
        headers: { authorization: `Bearer ${shop.publicKey}`, 'content-type': 'application/json' },
        payload: JSON.stringify(cardBody()),
        remoteAddress: address,
      });
    for (let index = 0; index < 6; index += 1) assert.equal((await create()).statusCode, 200);
    const limited = await create();
    assert.equal(limited.statusCode, 429);
    assert.equal(limited.json().code, 'rate_limited');
    assert.ok(!limited.body.includes('4242424242424242'));
  });

  test('the API reference lists 429 on the public-key routes only', async () => {
    const document = (await injectRaw(ctx, { method: 'GET', url: `${apiBase}/openapi.json` })).json();
    const responses = (path: string, method: string) =>
      Object.keys(document.paths[`${apiBase}${path}`][method].responses);
    assert.ok(responses('/payment_methods/create', 'post').includes('429'));
    assert.ok(responses('/payment/{id}/confirm', 'post').includes('429'));
    assert.ok(!responses('/customers/create', 'post').includes('429'));
  });

  test('takes the connection address, not X-Forwarded-For, when no proxy is trusted', async () => {
    const shop = await ctx.merchant();
    const method = await paymentMethodOf(shop);
    const address = '198.51.100.60';
    for (let index = 0; index < 6; index += 1) {
      const from = { key: shop.publicKey, address, forwardedFor: `203.0.113.${index}` };
      assert.equal((await read(ctx, method, from)).status, 200);
    }
    assertLimited(await read(ctx, method, { key: shop.publicKey, address, forwardedFor: '203.0.113.99' }), 10);
  });

  /** The hosted checkout page's card form: a post with a declined card, as a card tester makes it. */
  async function postDeclined(sessionId: string, address: string) {
    return postDeclinedCard(ctx, `/checkout/${sessionId}/pay`, address);
  }

  async function openSession(shop: TestMerchant): Promise<string> {
    const created = await shop.call('POST', '/checkout/session/create', {
      amountTotal: '500',
      currency: 'USD',
      returnUrl: 'https://shop.example/done',
    });
    assert.equal(created.status, 200, created.raw);
    return created.body.data.id;
  }

  test('limits the hosted checkout form per client address, on the same bucket as the public-key routes', async () => {
    const shop = await ctx.merchant();
    const method = await paymentMethodOf(shop);
    const address = '198.51.100.70';
    for (let index = 0; index < 3; index += 1) {
      assert.equal((await read(ctx, method, { key: shop.publicKey, address })).status, 200);
    }
    const [first, second] = [await openSession(shop), await openSession(shop)];
    for (const session of [first, second, first]) assert.equal((await postDeclined(session, address)).statusCode, 200);
    const limited = await postDeclined(second, address);
    assert.equal(limited.statusCode, 429);
    assert.equal(limited.headers['retry-after'], '10');
    assert.match(limited.body, /Too many card attempts on this page\. Try again in 10 seconds/);
    assert.ok(!limited.body.includes('4000000000000002'));
    assertLimited(await read(ctx, method, { key: shop.publicKey, address }), 10);
    ctx.clock.advance(10_000);
    assert.equal((await postDeclined(second, address)).statusCode, 200);
  });

  test('limits the hosted checkout form per session, from however many addresses', async () => {
    const shop = await ctx.merchant();
    const session = await openSession(shop);
    for (let index = 0; index < 6; index += 1) {
      assert.equal((await postDeclined(session, `203.0.113.${10 + index}`)).statusCode, 200);
    }
    const limited = await postDeclined(session, '203.0.113.99');
    assert.equal(limited.statusCode, 429);
    assert.equal(limited.headers['retry-after'], '10');
    // Another session of the same shop is not held back by this one.
    assert.equal((await postDeclined(await openSession(shop), '203.0.113.99')).statusCode, 200);
  });
  /** A sent invoice's hosted page: where its card form posts, and the form's token. */
  async function openInvoice(shop: TestMerchant): Promise<{ action: string; token: string }> {
    const customer = await shop.call('POST', '/customers/create', { email: 'ada@example.com' });
    const created = await shop.call('POST', '/invoices/create', {
      customerId: customer.body.data.id,
      currency: 'USD',
      lineItems: [{ description: 'Repair', amount: '800' }],
      collectionMethod: 'send_invoice',
    });
    assert.equal(created.status, 200, created.raw);
    const open = await shop.call('POST', `/invoices/${created.body.data.id}/finalize`);
    assert.equal(open.status, 200, open.raw);
    const url = new URL(open.body.data.hostedInvoiceUrl as string);
    const page = await injectRaw(ctx, { method: 'GET', url: `${url.pathname}${url.search}` });
    assert.equal(page.statusCode, 200);
    const action = /<form method="post" action="([^"]+)"/.exec(page.body)?.[1];
    const token = /name="token" value="([^"]+)"/.exec(page.body)?.[1];
    assert.ok(action && token, page.body);
    return { action, token };
  }

  /**
   * The hosted invoice page's card form: a post with a declined card, as a card tester makes it. Let
   * through, it is answered 303 to the invoice page (post/redirect/get), the decline shown there.
   */
  async function postDeclinedOnInvoice(form: { action: string; token: string }, address: string) {
    return postDeclinedCard(ctx, form.action, address, { token: form.token });
  }

  test('limits the hosted invoice form per client address, on the same bucket as the public-key routes', async () => {
    const shop = await ctx.merchant();
    const method = await paymentMethodOf(shop);
    const address = '198.51.100.80';
    for (let index = 0; index < 3; index += 1) {
      assert.equal((await read(ctx, method, { key: shop.publicKey, address })).status, 200);
    }
    const [first, second] = [await openInvoice(shop), await openInvoice(shop)];
    for (const form of [first, second, first]) {
      assert.equal((await postDeclinedOnInvoice(form, address)).statusCode, 303);
    }
    const limited = await postDeclinedOnInvoice(second, address);
    assert.equal(limited.statusCode, 429);
    assert.equal(limited.headers['retry-after'], '10');
    assert.ok(!limited.body.includes('4000000000000002'));
    assertLimited(await read(ctx, method, { key: shop.publicKey, address }), 10);
    ctx.clock.advance(10_000);
    assert.equal((await postDeclinedOnInvoice(second, address)).statusCode, 303);
  });

  test('limits the hosted invoice form per invoice, from however many addresses', async () => {
    const shop = await ctx.merchant();
    const form = await openInvoice(shop);
    for (let index = 0; index < 6; index += 1) {
      assert.equal((await postDeclinedOnInvoice(form, `203.0.113.${40 + index}`)).statusCode, 303);
    }
    const limited = await postDeclinedOnInvoice(form, '203.0.113.98');
    assert.equal(limited.statusCode, 429);
    assert.equal(limited.headers['retry-after'], '10');
    // Another invoice of the same shop is not held back by this one.
    assert.equal((await postDeclinedOnInvoice(await openInvoice(shop), '203.0.113.98')).statusCode, 303);
  });
});

describe('public-key rate limit per key', () => {
  let ctx: TestContext;
  before(async () => {
    // 4 a minute for a key, however many addresses it comes from; one token back every 15 seconds.
    ctx = await startTestApp({
      env: {
        TESSERA_RATE_PER_KEY_PER_MINUTE: '4',
        TESSERA_RATE_PER_ADDRESS_PER_MINUTE: '100',
        TESSERA_TRUST_PROXY: '127.0.0.1',
      },
    });
  });
  after(async () => ctx.close());

  test('counts one key from many addresses together; another key is not affected', async () => {
    const [shop, other] = [await ctx.merchant(), await ctx.merchant()];
    const [method, otherMethod] = [await paymentMethodOf(shop), await paymentMethodOf(other)];
    for (let index = 0; index < 4; index += 1) {
      assert.equal((await read(ctx, method, { key: shop.publicKey, address: `192.0.2.${index}` })).status, 200);
    }
    assertLimited(await read(ctx, method, { key: shop.publicKey, address: '192.0.2.200' }), 15);
    assert.equal((await read(ctx, otherMethod, { key: other.publicKey, address: '192.0.2.200' })).status, 200);
    ctx.clock.advance(15_000);
    assert.equal((await read(ctx, method, { key: shop.publicKey, address: '192.0.2.201' })).status, 200);
  });
});

describe('public-key rate limit per address behind a trusted proxy', () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await startTestApp({
      env: {
        TESSERA_RATE_PER_ADDRESS_PER_MINUTE: '3',
        TESSERA_TRUST_PROXY: '127.0.0.1',
      },
    });
  });
  after(async () => ctx.close());

  test('one key from two clients behind the proxy: each client has its own limit', async () => {
    const shop = await ctx.merchant();
    const method = await paymentMethodOf(shop);
    const proxy = '127.0.0.1';
    for (let index = 0; index < 3; index += 1) {
      assert.equal(
        (await read(ctx, method, { key: shop.publicKey, address: proxy, forwardedFor: '203.0.113.1' })).status,
        200,
      );
    }
    assertLimited(await read(ctx, method, { key: shop.publicKey, address: proxy, forwardedFor: '203.0.113.1' }), 20);
    assert.equal(
      (await read(ctx, method, { key: shop.publicKey, address: proxy, forwardedFor: '203.0.113.2' })).status,
      200,
    );
    // An untrusted peer's X-Forwarded-For is not believed: it is counted as itself.
    for (let index = 0; index < 3; index += 1) {
      const from = { key: shop.publicKey, address: '198.51.100.9', forwardedFor: `203.0.113.${10 + index}` };
      assert.equal((await read(ctx, method, from)).status, 200);
    }
    assertLimited(
      await read(ctx, method, { key: shop.publicKey, address: '198.51.100.9', forwardedFor: '203.0.113.20' }),
      20,
    );
  });
});

describe('rate limit settings', () => {
  test('default to 600 a minute per key and 30 per address, no proxy trusted', () => {
    const config = loadConfig({});
    assert.equal(config.publicKeyRequestsPerKeyPerMinute, 600);
    assert.equal(config.publicKeyRequestsPerAddressPerMinute, 30);
    assert.equal(config.trustProxy, undefined);
  });

  test('refuse a limit that is not a whole number from 1, and a proxy that is not an address or range', () => {
    for (const value of ['0', '-1', '2.5', 'many']) {
      assert.throws(
        () => loadConfig({ TESSERA_RATE_PER_ADDRESS_PER_MINUTE: value }),
        (err: unknown) => err instanceof ConfigError && /TESSERA_RATE_PER_ADDRESS_PER_MINUTE/.test(err.message),
      );
    }
    assert.throws(
      () => loadConfig({ TESSERA_TRUST_PROXY: '10.0.0.1, proxy.internal' }),
      (err: unknown) => err instanceof ConfigError && /TESSERA_TRUST_PROXY/.test(err.message),
    );
    assert.equal(loadConfig({ TESSERA_TRUST_PROXY: '10.0.0.0/8, ::1' }).trustProxy, '10.0.0.0/8,::1');
  });
});
