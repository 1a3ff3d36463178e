import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { databaseKind, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';

const hourMs = 60 * 60 * 1000;

/** What a store plugin (WooCommerce, Magento) sends, every field set. */
function pluginSession(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    amountTotal: '2598',
    currency: 'usd',
    orderNo: 10045,
    customerEmail: 'ada@example.com',
    billingDetails: {
      firstName: 'Ada',
      lastName: 'Lovelace',
      email: 'ada@example.com',
      phone: '+44 20 7946 0000',
      address: { line1: '12 St James Sq', city: 'London', postalCode: 'SW1Y 4JH', country: 'gb' },
    },
    lineItems: [
      {
        amount: 12.99,
        currency: 'USD',
        description: 'Blue, size M',
        images: ['https://shop.example/tee.png'],
        name: 'T-shirt',
        quantity: '2',
      },
    ],
    shipping: { firstName: 'Ada', lastName: 'Lovelace', phone: '020 7946 0000', address: { country: 'GB' } },
    paymentMethodTypes: ['Card', null],
    preAuth: 'y',
    setupFutureUsage: 'off',
    statementDescriptor: 'SHOP EXAMPLE',
    website: 'https://shop.example',
    returnUrl: 'https://shop.example/checkout/done?order=10045',
    cancelUrl: 'https://shop.example/cart',
    notifyUrl: 'https://shop.example/tessera/notify',
    ...overrides,
  };
}

describe(`checkout sessions API (${databaseKind})`, () => {
  let ctx: TestContext;
  let shop: TestMerchant;

  before(async () => {
    ctx = await startTestApp();
    shop = await ctx.merchant({ name: 'Example Shop' });
  });
  after(async () => ctx.close());

  async function create(body: Record<string, unknown>, merchant = shop) {
    return merchant.call('POST', '/checkout/session/create', body);
  }

  async function refused(body: Record<string, unknown>, param: string, message: RegExp) {
    const response = await create(body);
    assert.equal(response.status, 400, response.raw);
    assert.equal(response.body.code, 'invalid_request');
    assert.equal(response.body.data?.param, param, response.raw);
    assert.match(response.body.msg, message);
  }

  test('a session answers every field the plugins send, orderNo exactly as sent, open for 24 hours', async () => {
    const response = await create(pluginSession());
    assert.equal(response.status, 200, response.raw);
    const session = response.body.data;
    assert.match(session.id, /^cs_\d{19}$/);
    assert.equal(session.url, `${ctx.tessera.publicUrl()}/checkout/${session.id}`);
    assert.equal(session.status, 'open');
    assert.equal(session.amountTotal, '2598');
    assert.equal(session.currency, 'USD');
    assert.equal(session.orderNo, 10045);
    assert.equal(session.customer, null);
    assert.equal(session.customerEmail, 'ada@example.com');
    assert.deepEqual(session.billingDetails, {
      firstName: 'Ada',
      lastName: 'Lovelace',
      email: 'ada@example.com',
      phone: '+44 20 7946 0000',
      description: null,
      address: {
        line1: '12 St James Sq',
        line2: null,
        city: 'London',
        state: null,
        postalCode: 'SW1Y 4JH',
        country: 'GB',
      },
    });
    assert.deepEqual(session.lineItems, [
      {
        amount: 12.99,
        currency: 'USD',
        description: 'Blue, size M',
        images: ['https://shop.example/tee.png'],
        name: 'T-shirt',
        quantity: 2,
      },
    ]);
    assert.equal(session.shipping.address.country, 'GB');
    assert.equal(session.shipping.phone, '020 7946 0000');
    assert.deepEqual(session.paymentMethodTypes, ['card']);
    assert.equal(session.preAuth, 'y');
    assert.equal(session.setupFutureUsage, 'off');
    assert.equal(session.statementDescriptor, 'SHOP EXAMPLE');
    assert.equal(session.website, 'https://shop.example');
    assert.equal(session.returnUrl, 'https://shop.example/checkout/done?order=10045');
    assert.equal(session.cancelUrl, 'https://shop.example/cart');
    assert.equal(session.notifyUrl, 'https://shop.example/tessera/notify');
    assert.equal(session.paymentId, null);
    assert.equal(session.created, ctx.clock.now().toISOString());
    assert.equal(session.expiresAt, new Date(ctx.clock.now().getTime() + 24 * hourMs).toISOString());

    const read = await shop.call('GET', `/checkout/session/${session.id}`);
    assert.equal(read.status, 200, read.raw);
    assert.deepEqual(read.body.data, session);
  });

  test('orderNo sent as text is answered as text; defaults and "" for optional ids and URLs', async () => {
    const response = await create({
      amountTotal: 500,
      currency: 'JPY',
      orderNo: '000123',
      customer: '',
      cancelUrl: '',
      notifyUrl: '',
      expiresAt: '',
      returnUrl: 'https://shop.example/done',
    });
    assert.equal(response.status, 200, response.raw);
    const session = response.body.data;
    assert.equal(session.orderNo, '000123');
    assert.equal(session.amountTotal, '500');
    assert.equal(session.customer, null);
    assert.equal(session.cancelUrl, null);
    assert.equal(session.notifyUrl, null);
    assert.equal(session.preAuth, 'n');
    assert.equal(session.setupFutureUsage, 'off');
    assert.equal(session.billingDetails, null);
    assert.equal(session.lineItems, null);
    assert.equal(session.shipping, null);
  });

  test("a customer of the merchant is taken; another merchant's or a malformed id is refused", async () => {
    const customer = await shop.call('POST', '/customers/create', { email: 'ada@example.com' });
    const ok = await create(pluginSession({ customer: customer.body.data.id }));
    assert.equal(ok.status, 200, ok.raw);
    assert.equal(ok.body.data.customer, customer.body.data.id);

    const other = await ctx.merchant();
    const theirs = await create(pluginSession({ customer: customer.body.data.id }), other);
    assert.equal(theirs.status, 404, theirs.raw);
    assert.equal(theirs.body.code, 'resource_missing');
    assert.equal(theirs.body.data.param, 'customer');
    await refused(pluginSession({ customer: 'ada' }), 'customer', /customer id/);
  });

  test('a session storing the card needs a customer and tokenization, as a storing payment does', async () => {
    const customer = await shop.call('POST', '/customers/create', { email: 'ada@example.com' });
    const storing = await create(pluginSession({ setupFutureUsage: 'on', customer: customer.body.data.id }));
    assert.equal(storing.status, 200, storing.raw);
    assert.equal(storing.body.data.setupFutureUsage, 'on');
    const zero = await create(
      pluginSession({ amountTotal: '0', setupFutureUsage: 'on', customer: customer.body.data.id }),
    );
    assert.equal(zero.status, 200, zero.raw);
    await refused(pluginSession({ setupFutureUsage: 'on' }), 'customer', /customer is required/);
    const plain = await ctx.merchant({ tokenization: false });
    const refusedStoring = await create(pluginSession({ setupFutureUsage: 'on' }), plain);
    assert.equal(refusedStoring.status, 403, refusedStoring.raw);
    assert.equal(refusedStoring.body.code, 'tokenization_not_enabled');
    assert.equal(refusedStoring.body.data.param, 'setupFutureUsage');
  });

  test('paymentMethodTypes other than card are refused, naming the type', async () => {
    await refused(pluginSession({ paymentMethodTypes: ['card', 'alipay'] }), 'paymentMethodTypes', /'alipay'/);
    await refused(pluginSession({ paymentMethodTypes: ['wechat_pay'] }), 'paymentMethodTypes', /'wechat_pay'/);
  });

  test('each field is validated as a payment validates it, naming the field and the rule', async () => {
    const { amountTotal: _amount, ...noAmount } = pluginSession();
    await refused(noAmount, 'amountTotal', /required|amountTotal/);
    await refused(pluginSession({ amountTotal: '12.50' }), 'amountTotal', /digits/);
    await refused(pluginSession({ amountTotal: -1 }), 'amountTotal', /digits|whole number/);
    await refused(pluginSession({ amountTotal: '0', setupFutureUsage: 'off' }), 'amountTotal', /more than 0/);
    await refused(pluginSession({ currency: 'XYZ' }), 'currency', /ISO 4217/);
    await refused(pluginSession({ orderNo: '' }), 'orderNo', /1 to 64|orderNo/);
    await refused(pluginSession({ customerEmail: 'not-an-address' }), 'customerEmail', /email/);
    await refused(pluginSession({ billingDetails: { nickname: 'x' } }), 'billingDetails.nickname', /nickname/);
    await refused(
      pluginSession({ lineItems: [{ name: 'Tee', currency: 'ABC' }] }),
      'lineItems[0].currency',
      /ISO 4217/,
    );
    await refused(pluginSession({ lineItems: [{ quantity: 0 }] }), 'lineItems[0].quantity', /quantity|>=|1/);
    await refused(pluginSession({ shipping: { phone: 'call me' } }), 'shipping.phone', /phone/);
    await refused(pluginSession({ preAuth: 'maybe' }), 'preAuth', /preAuth|n|y/);
    await refused(pluginSession({ setupFutureUsage: 'always' }), 'setupFutureUsage', /on|off|setupFutureUsage/);
    await refused(pluginSession({ statementDescriptor: 'X'.repeat(23) }), 'statementDescriptor', /22/);
    await refused(pluginSession({ website: 'shop.example' }), 'website', /http/);
    await refused(pluginSession({ returnUrl: 'javascript:alert(1)' }), 'returnUrl', /http/);
    const { returnUrl: _return, ...noReturn } = pluginSession();
    await refused(noReturn, 'returnUrl', /required|returnUrl/);
    await refused(pluginSession({ cancelUrl: 'ftp://shop.example' }), 'cancelUrl', /http/);
    await refused(pluginSession({ notifyUrl: 'mailto:ops@shop.example' }), 'notifyUrl', /http/);
    await refused(pluginSession({ surname: 'Lovelace' }), 'surname', /surname/);
  });

  test('expiresAt is taken from 30 minutes to 24 hours ahead, as ISO 8601 or Unix seconds', async () => {
    const now = ctx.clock.now().getTime();
    const inAnHour = new Date(now + hourMs).toISOString();
    const iso = await create(pluginSession({ expiresAt: inAnHour }));
    assert.equal(iso.status, 200, iso.raw);
    assert.equal(iso.body.data.expiresAt, inAnHour);
    const unix = await create(pluginSession({ expiresAt: Math.floor((now + 2 * hourMs) / 1000) }));
    assert.equal(unix.status, 200, unix.raw);
    assert.equal(unix.body.data.expiresAt, new Date(now + 2 * hourMs).toISOString());
    const soon = new Date(now + 29 * 60 * 1000).toISOString();
    await refused(pluginSession({ expiresAt: soon }), 'expiresAt', /30 minutes to 24 hours/);
    const late = new Date(now + 25 * hourMs).toISOString();
    await refused(pluginSession({ expiresAt: late }), 'expiresAt', /30 minutes to 24 hours/);
    await refused(pluginSession({ expiresAt: 'tomorrow' }), 'expiresAt', /ISO 8601|Unix/);
  });

  test('a session is seen only by its merchant', async () => {
    const mine = await create(pluginSession());
    const other = await ctx.merchant();
    const read = await other.call('GET', `/checkout/session/${mine.body.data.id}`);
    assert.equal(read.status, 404, read.raw);
    assert.equal(read.body.code, 'resource_missing');
    const expire = await other.call('POST', `/checkout/session/${mine.body.data.id}/expire`);
    assert.equal(expire.status, 404, expire.raw);
    const list = await other.call('GET', '/checkout/session');
    assert.deepEqual(list.body.data.data, []);
  });

  test('the list is newest first with cursor pagination and a status filter', async () => {
    const merchant = await ctx.merchant();
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      ctx.clock.advance(1000);
      const response = await create(pluginSession({ orderNo: `list-${i}` }), merchant);
      ids.push(response.body.data.id);
    }
    const first = await merchant.call('GET', '/checkout/session?limit=2');
    assert.equal(first.status, 200, first.raw);
    assert.deepEqual(
      first.body.data.data.map((s: { id: string }) => s.id),
      [ids[2], ids[1]],
    );
    assert.equal(first.body.data.hasMore, true);
    const next = await merchant.call('GET', `/checkout/session?limit=2&startingAfter=${ids[1]}`);
    assert.deepEqual(
      next.body.data.data.map((s: { id: string }) => s.id),
      [ids[0]],
    );
    assert.equal(next.body.data.hasMore, false);
    await merchant.call('POST', `/checkout/session/${ids[0]}/expire`);
    const expired = await merchant.call('GET', '/checkout/session?status=expired');
    assert.deepEqual(
      expired.body.data.data.map((s: { id: string }) => s.id),
      [ids[0]],
    );
    const bad = await merchant.call('GET', '/checkout/session?status=paid');
    assert.equal(bad.status, 400, bad.raw);
    assert.equal(bad.body.data.param, 'status');
  });

  test('expire closes an open session once; a second expire is invalid_state', async () => {
    const session = (await create(pluginSession())).body.data;
    const expired = await shop.call('POST', `/checkout/session/${session.id}/expire`);
    assert.equal(expired.status, 200, expired.raw);
    assert.equal(expired.body.data.status, 'expired');
    const again = await shop.call('POST', `/checkout/session/${session.id}/expire`);
    assert.equal(again.status, 400, again.raw);
    assert.equal(again.body.code, 'invalid_state');
    assert.match(again.body.msg, /expired/);
  });

  test('the expiry job expires an open session at expiresAt and not before', async () => {
    const now = ctx.clock.now().getTime();
    const short = (await create(pluginSession({ expiresAt: new Date(now + hourMs).toISOString() }))).body.data;
    const long = (await create(pluginSession())).body.data;
    ctx.clock.advance(hourMs - 1000);
    await ctx.runJobs();
    assert.equal((await shop.call('GET', `/checkout/session/${short.id}`)).body.data.status, 'open');
    ctx.clock.advance(1000);
    await ctx.runJobs();
    assert.equal((await shop.call('GET', `/checkout/session/${short.id}`)).body.data.status, 'expired');
    assert.equal((await shop.call('GET', `/checkout/session/${long.id}`)).body.data.status, 'open');
    ctx.clock.advance(23 * hourMs);
    await ctx.runJobs();
    assert.equal((await shop.call('GET', `/checkout/session/${long.id}`)).body.data.status, 'expired');
  });
});
