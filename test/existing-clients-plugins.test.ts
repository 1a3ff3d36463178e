/**
 * docs/api.md#requests, docs/api.md#compatibility-with-existing-clients (issue 10): the provider's published clients work against Tessera by changing only
 * the host. Each test replays a request as a client sends it — method, path, content type, body
 * bytes — and checks the part of the answer that client relies on; the strictness that remains
 * (an unknown field is still 400 naming it) is checked beside it.
 */
import { createHmac } from 'node:crypto';
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  apiBase,
  databaseKind,
  injectRaw,
  startTestApp,
  type TestContext,
  type TestMerchant,
} from './helpers/harness.js';
import { startReceiver, type Receiver, type ReceivedRequest } from './helpers/receiver.js';
import { clientReplay, json, threeDSecureCard, visa } from './helpers/client-replay.js';

describe(`existing clients: store plugins, public keys and CORS (${databaseKind})`, () => {
  let ctx: TestContext;
  const receivers: Receiver[] = [];
  before(async () => {
    ctx = await startTestApp({ env: { TESSERA_WEBHOOK_POLL_INTERVAL_MS: '600000' } });
  });
  afterEach(() => ctx.tessera.webhookDispatcher.stop());
  after(async () => {
    await Promise.all(receivers.map((receiver) => receiver.close()));
    await ctx.close();
  });
  const { send, ok, refused, method, payment, challengeReturn } = clientReplay(() => ctx);

  /**
   * The provider's store plugins run against Tessera (issue 21): what WooCommerce
   * (includes/class-wc-mc-gateway.php, payment-methods/class-mc-creditcard.php), OpenCart
   * (catalog/controller/extension/moneycollect/checkout.php) and Magento
   * (Model/PaymentMethod.php, Model/Method/Card.php) send, and the fields they read back.
   */
  describe('store plugins (WooCommerce, OpenCart, Magento)', () => {
    /** The billing details of an order as the plugins build them; WooCommerce's phone is optional. */
    const orderBilling = (phone: string) => ({
      firstName: 'Ada',
      lastName: 'Lovelace',
      email: 'ada@example.com',
      phone,
      address: { country: 'GB', state: '', city: 'London', line1: '12 St James Sq', line2: '', postalCode: 'SW1Y 4JH' },
    });

    /** What the plugins print into the order note: `paymentMethodDetails.type` and `.card.brand`. */
    function assertCardDetails(paid: Record<string, any>, card: Record<string, any>) {
      assert.deepEqual(paid.paymentMethodDetails, {
        type: 'card',
        card: {
          brand: card.brand,
          last4: card.last4,
          expMonth: card.expMonth,
          expYear: card.expYear,
          country: card.country,
          fingerprint: card.fingerprint,
        },
      });
    }

    test('every payment answers paymentMethodDetails: created, read, listed, confirmed and in its webhook body', async () => {
      const merchant = await ctx.merchant();
      const target = await startReceiver();
      receivers.push(target);
      const methodId = await method(merchant);
      const card = ok(await merchant.call('GET', `/payment_methods/${methodId}`)).card;
      // The WooCommerce card payment (class-mc-creditcard.php): confirm "true", automatic, notifyUrl.
      const paid = ok(
        await merchant.call('POST', '/payment/create', {
          orderNo: 5001,
          amount: 2598,
          currency: 'USD',
          confirm: 'true',
          confirmationMethod: 'automatic',
          lineItems: [{ amount: 12.99, currency: 'USD', description: '', images: [''], name: 'Tee', quantity: 2 }],
          paymentMethod: methodId,
          customerId: '',
          ip: '203.0.113.7',
          notifyUrl: target.url('/?wc-api=wc_mc_webhook'),
          returnUrl: 'https://shop.example.com/checkout/order-received/5001/?key=wc_order_x',
          preAuth: 'n',
          setupFutureUsage: 'off',
          statementDescriptor: '',
          website: 'https://shop.example.com',
        }),
      );
      assert.equal(paid.status, 'succeeded');
      assertCardDetails(paid, card);
      assert.equal(paid.paymentMethodDetails.card.last4, '4242');
      assertCardDetails(ok(await merchant.call('GET', `/payment/${paid.id}`)), card);
      const listed = ok(await merchant.call('GET', '/payment?limit=1')).data[0];
      assertCardDetails(listed, card);

      // A payment waiting for a method has none; the method given later shows.
      const waiting = ok(await merchant.call('POST', '/payment/create', { amount: '100', currency: 'USD' }));
      assert.equal(waiting.paymentMethodDetails, null);
      const given = ok(
        await merchant.call('POST', `/payment/${waiting.id}/confirm`, { paymentMethod: await method(merchant) }),
      );
      assert.equal(given.paymentMethodDetails.type, 'card');
      assert.equal(given.paymentMethodDetails.card.last4, '4242');

      // The webhook body, as the plugins' notify handlers read it (`data.paymentMethodDetails`).
      await ctx.tessera.webhookDispatcher.runOnce();
      const received = await target.waitFor(1);
      const bodies = received.map((request) => JSON.parse(request.rawBody.toString()));
      const succeeded = bodies.find((body) => body.data.id === paid.id);
      assert.ok(succeeded, JSON.stringify(bodies.map((body) => body.type)));
      assertCardDetails(succeeded.data, card);
    });

    test('every field the plugins read back is there, with the type their PHP expects', async () => {
      const merchant = await ctx.merchant();
      const target = await startReceiver();
      receivers.push(target);
      // WooCommerce and OpenCart create a customer per shop account and keep `data.id`.
      const customerId = ok(
        await merchant.call('POST', '/customers/create', { ...orderBilling(''), description: '' }),
      ).id;
      assert.match(customerId, /^cus_\d{19}$/);
      // The hosted payment page of all three: they redirect the shopper to `data.url`.
      const session = ok(
        await merchant.call('POST', '/checkout/session/create', {
          customer: customerId,
          customerEmail: '',
          cancelUrl: 'https://shop.example.com/checkout/',
          returnUrl: 'https://shop.example.com/index.php?route=extension/moneycollect/back',
          notifyUrl: target.url('/index.php?route=extension/moneycollect/webhook'),
          preAuth: 'n',
          website: 'https://shop.example.com',
          paymentMethodTypes: ['card'],
          orderNo: 5004,
          currency: 'USD',
          amountTotal: 2598,
          billingDetails: orderBilling(''),
          lineItems: [{ amount: 25.98, currency: 'USD', description: '', images: [''], name: 'Tee', quantity: 1 }],
        }),
      );
      assert.match(session.url, /^https?:\/\/[^/]+\/checkout\/cs_\d{19}$/);

      // The in-page card payment (WooCommerce class-mc-creditcard.php): `data.id`, and `nextAction`
      // only when the shopper must go somewhere: `type` "redirect" and `redirectToUrl`.
      const inPage = (paymentMethod: string, orderNo: number) =>
        merchant.call('POST', '/payment/create', {
          orderNo,
          amount: 2598,
          currency: 'USD',
          confirm: 'true',
          confirmationMethod: 'automatic',
          paymentMethod,
          customerId,
          ip: '203.0.113.7',
          notifyUrl: target.url('/?wc-api=wc_mc_webhook'),
          returnUrl: `https://shop.example.com/checkout/order-received/${orderNo}/?key=wc_order_z`,
          preAuth: 'n',
          setupFutureUsage: 'off',
          website: 'https://shop.example.com',
        });
      const paid = ok(await inPage(await method(merchant), 5005));
      assert.match(paid.id, /^pt_\d{19}$/);
      assert.equal('nextAction' in paid, false);
      const challenged = ok(await inPage(await method(merchant, threeDSecureCard), 5006));
      assert.equal(challenged.nextAction.type, 'redirect');
      assert.match(challenged.nextAction.redirectToUrl, /^https?:\/\/\S+$/);

      // The return page and the webhook handler read the payment again (GET /payment/{id}): the
      // order by `orderNo` (as sent: a number), the shop account by `customerId`, the outcome by
      // `status` (`displayStatus` and `errorMessage` shown to the shopper), the note by
      // `paymentMethodDetails.type` and `.card.brand`.
      const read = ok(await merchant.call('GET', `/payment/${paid.id}`));
      assert.equal(read.orderNo, 5005);
      assert.equal(read.customerId, customerId);
      assert.equal(read.status, 'succeeded');
      assert.equal(read.displayStatus, 'succeeded');
      assert.equal(read.errorMessage, null);
      assert.equal(read.paymentMethodDetails.type, 'card');
      assert.equal(read.paymentMethodDetails.card.brand, 'visa');
      const declined = ok(await inPage(await method(merchant, '4000000000000002'), 5007));
      const readDeclined = ok(await merchant.call('GET', `/payment/${declined.id}`));
      assert.equal(readDeclined.status, 'failed');
      assert.equal(typeof readDeclined.displayStatus, 'string');
      assert.equal(typeof readDeclined.errorMessage, 'string');
      assert.ok(readDeclined.errorMessage.length > 0);

      // The webhook handlers take a body whose `type` contains "payment", then `data.orderNo` and `data.id`.
      await ctx.tessera.webhookDispatcher.runOnce();
      const received = await target.waitFor(2);
      const bodies = received.map((request) => JSON.parse(request.rawBody.toString()));
      for (const [orderNo, id] of [
        [5005, paid.id],
        [5007, declined.id],
      ]) {
        const body = bodies.find((candidate) => candidate.data.id === id);
        assert.ok(body, JSON.stringify(bodies.map((candidate) => [candidate.type, candidate.data.id])));
        assert.ok(body.type.includes('payment'), body.type);
        assert.equal(body.data.orderNo, orderNo);
      }
    });

    test('"" for every optional pattern-checked field is absent: an order without a phone checks out', async () => {
      const merchant = await ctx.merchant();
      // WooCommerce's card payment method for an order without a phone (class-mc-creditcard.php).
      const created = ok(
        await merchant.call('POST', '/payment_methods/create', {
          type: 'card',
          billingDetails: orderBilling(''),
          card: { cardNo: visa, expMonth: '12', expYear: '2030', securityCode: '123' },
        }),
      );
      assert.equal(created.billingDetails.phone, null);
      assert.equal(created.billingDetails.address.line2, '');
      // The checkout session of all three plugins (base_data + order_data), shipping to the same address.
      const session = ok(
        await merchant.call('POST', '/checkout/session/create', {
          customer: '',
          customerEmail: 'ada@example.com',
          cancelUrl: 'https://shop.example.com/checkout/',
          returnUrl: 'https://shop.example.com/checkout/order-received/5002/?key=wc_order_y',
          notifyUrl: 'https://shop.example.com/?wc-api=wc_mc_webhook',
          preAuth: 'n',
          website: 'https://shop.example.com',
          paymentMethodTypes: ['card'],
          orderNo: 5002,
          currency: 'USD',
          amountTotal: 2598,
          billingDetails: orderBilling(''),
          shipping: { firstName: 'Ada', lastName: 'Lovelace', phone: '', address: { country: 'GB', state: '' } },
          lineItems: [{ amount: 25.98, currency: 'USD', description: '', images: [''], name: 'Tee', quantity: 1 }],
        }),
      );
      assert.match(session.id, /^cs_\d{19}$/);
      // Customers too (the plugins create one per shop account), with an empty phone and country.
      const customer = ok(
        await merchant.call('POST', '/customers/create', {
          email: 'ada@example.com',
          phone: '',
          address: { country: '' },
        }),
      );
      assert.equal(customer.phone, null);
      // A payment's shipping phone and receipt e-mail alike; a phone that is given is still checked.
      const shipped = await payment(merchant, { shipping: { firstName: 'Ada', phone: '' }, receiptEmail: '', ip: '' });
      assert.equal(shipped.shipping.phone, null);
      assert.equal(shipped.receiptEmail, null);
      refused(
        await merchant.call('POST', '/payment_methods/create', {
          type: 'card',
          billingDetails: orderBilling('call me'),
          card: { cardNo: visa, expMonth: '12', expYear: '2030', securityCode: '123' },
        }),
        'billingDetails.phone',
      );
    });

    test('returnUrl and cancelUrl keep their query byte for byte; payment_id is appended after &', async () => {
      const merchant = await ctx.merchant();
      // OpenCart's $this->url->link('extension/moneycollect/back') and Magento's return URL.
      const returnUrl = 'https://shop.example.com/index.php?route=extension/moneycollect/back&x=a%20b+c';
      const cancelUrl = 'https://shop.example.com/index.php?route=checkout/checkout';
      const session = ok(
        await merchant.call('POST', '/checkout/session/create', {
          amountTotal: '2598',
          currency: 'USD',
          orderNo: 'oc-5003',
          returnUrl,
          cancelUrl,
        }),
      );
      assert.equal(session.returnUrl, returnUrl);
      const canceled = await injectRaw(ctx, { method: 'GET', url: `/checkout/${session.id}/cancel` });
      assert.equal(canceled.headers.location, cancelUrl);
      const paid = await injectRaw(ctx, {
        method: 'POST',
        url: `/checkout/${session.id}/pay`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ cardNo: visa, expiry: '12/30', securityCode: '123', name: 'Ada' }).toString(),
      });
      assert.equal(paid.statusCode, 303, paid.body);
      assert.match(
        String(paid.headers.location),
        /^https:\/\/shop\.example\.com\/index\.php\?route=extension\/moneycollect\/back&x=a%20b\+c&payment_id=pt_\d{19}$/,
      );
      // The 3-D Secure return of a payment made directly keeps it the same way.
      const { location } = await challengeReturn(returnUrl);
      assert.ok(location.startsWith(`${returnUrl}&payment_id=pt_`), location);
    });
  });

  describe('public keys and CORS', () => {
    const publicHeaders = (merchant: TestMerchant, extra: Record<string, string> = {}) => ({
      authorization: `Bearer ${merchant.publicKey}`,
      origin: 'https://shop.example.com',
      ...extra,
    });

    test('a public key creates and reads a payment method, and confirms and reads a payment with its clientSecret', async () => {
      const merchant = await ctx.merchant();
      const card = { cardNo: visa, expMonth: '12', expYear: '2030', securityCode: '123' };
      const created = ok(
        await send(merchant, 'POST', '/payment_methods/create', {
          type: json,
          body: JSON.stringify({ type: 'card', card }),
          headers: publicHeaders(merchant),
        }),
      );
      const read = await send(merchant, 'GET', `/payment_methods/${created.id}`, { headers: publicHeaders(merchant) });
      assert.equal(ok(read).id, created.id);
      assert.equal(read.headers['access-control-allow-origin'], '*');
      const waiting = await payment(merchant);
      const withSecret = publicHeaders(merchant, { clientSecret: waiting.clientSecret });
      const fetched = await send(merchant, 'GET', `/payment/${waiting.id}`, { headers: withSecret });
      assert.equal(ok(fetched).status, 'requires_confirmation');
      const body = JSON.stringify({ paymentMethod: created.id });
      const confirmed = await send(merchant, 'POST', `/payment/${waiting.id}/confirm`, {
        type: json,
        body,
        headers: withSecret,
      });
      assert.equal(ok(confirmed).status, 'succeeded');
      assert.equal(confirmed.headers['access-control-allow-origin'], '*');
    });

    test("a public key without the payment's clientSecret, or with another payment's, is 403 permission_denied", async () => {
      const merchant = await ctx.merchant();
      const [waiting, other] = [await payment(merchant), await payment(merchant)];
      for (const headers of [
        publicHeaders(merchant),
        publicHeaders(merchant, { clientSecret: other.clientSecret }),
        publicHeaders(merchant, { clientSecret: `${waiting.clientSecret}0` }),
      ]) {
        for (const [verb, path] of [
          ['GET', `/payment/${waiting.id}`],
          ['POST', `/payment/${waiting.id}/confirm`],
        ] as const) {
          const response = await send(merchant, verb, path, {
            headers,
            ...(verb === 'POST' ? { type: json, body: '{}' } : {}),
          });
          assert.equal(response.status, 403, `${verb} ${path}: ${response.raw}`);
          assert.equal(response.body.code, 'permission_denied');
          assert.equal(response.headers['access-control-allow-origin'], '*');
        }
      }
      assert.equal(ok(await merchant.call('GET', `/payment/${waiting.id}`)).status, 'requires_confirmation');
      // A private key needs no clientSecret.
      assert.equal(ok(await merchant.call('GET', `/payment/${other.id}`)).id, other.id);
    });

    /** Every route Fastify has registered, read from its route tree: [method, url with :params]. */
    function registeredRoutes(): Array<[string, string]> {
      const tree = ctx.tessera.server.printRoutes({ commonPrefix: false });
      const parents: string[] = [];
      const routes: Array<[string, string]> = [];
      for (const line of tree.split('\n')) {
        const match = /^([│ ]*)[├└]── (\S+)(?: \(([^)]*)\))?/.exec(line);
        if (!match) continue;
        const depth = match[1]!.length / 4;
        const url = (parents[depth - 1] ?? '') + match[2]!;
        parents[depth] = url;
        parents.length = depth + 1;
        for (const verb of (match[3] ?? '').split(', ').filter(Boolean)) routes.push([verb, url]);
      }
      return routes;
    }

    test('every other registered route of the merchant API refuses a public key with 403 permission_denied', async () => {
      const merchant = await ctx.merchant();
      const allowed = new Set([
        `POST ${apiBase}/payment_methods/create`,
        `GET ${apiBase}/payment_methods/:id`,
        `POST ${apiBase}/payment/:id/confirm`,
        `GET ${apiBase}/payment/:id`,
        `HEAD ${apiBase}/payment_methods/:id`,
        `HEAD ${apiBase}/payment/:id`,
      ]);
      // The OpenAPI document is public (no key at all), and OPTIONS answers preflights (below).
      const checked = registeredRoutes().filter(
        ([verb, url]) =>
          url.startsWith(`${apiBase}/`) &&
          url !== `${apiBase}/openapi.json` &&
          verb !== 'OPTIONS' &&
          !allowed.has(`${verb} ${url}`),
      );
      assert.ok(checked.length >= 25, `only ${checked.length} routes found`);
      for (const [verb, url] of checked) {
        const path = url
          .slice(apiBase.length)
          .replace(':customerId', 'cus_1000000000000000000')
          .replace(':id', 'pt_1000000000000000000');
        const response = await send(merchant, verb as 'GET', path, {
          headers: publicHeaders(merchant),
          ...(verb === 'POST' ? { type: json, body: '{}' } : {}),
        });
        assert.equal(response.status, 403, `${verb} ${url}: ${response.raw}`);
        if (verb !== 'HEAD') assert.equal(response.body.code, 'permission_denied', `${verb} ${url}`);
      }
    });

    test('CORS preflights of the four public routes are answered from any origin with the headers they need', async () => {
      const paths: Array<[string, string]> = [
        ['POST', '/payment_methods/create'],
        ['GET', '/payment_methods/pm_1000000000000000000'],
        ['POST', '/payment/pt_1000000000000000000/confirm'],
        ['GET', '/payment/pt_1000000000000000000'],
      ];
      for (const [verb, path] of paths) {
        const preflight = await injectRaw(ctx, {
          method: 'OPTIONS',
          url: `${apiBase}${path}`,
          headers: {
            origin: 'https://any-shop.example',
            'access-control-request-method': verb,
            'access-control-request-headers': 'authorization,content-type,clientsecret,idempotency-key',
          },
        });
        assert.equal(preflight.statusCode, 204, `${path}: ${preflight.body}`);
        assert.equal(preflight.headers['access-control-allow-origin'], '*');
        assert.ok(String(preflight.headers['access-control-allow-methods']).split(', ').includes(verb), path);
        const allowedHeaders = String(preflight.headers['access-control-allow-headers']).toLowerCase().split(', ');
        for (const name of ['authorization', 'content-type', 'clientsecret', 'idempotency-key']) {
          assert.ok(allowedHeaders.includes(name), `${path} allows ${name}`);
        }
      }
      const privateOnly = await injectRaw(ctx, {
        method: 'OPTIONS',
        url: `${apiBase}/payment/pt_1000000000000000000/capture`,
        headers: { origin: 'https://any-shop.example', 'access-control-request-method': 'POST' },
      });
      assert.equal(privateOnly.headers['access-control-allow-origin'], undefined);
      assert.notEqual(privateOnly.statusCode, 204);
      const merchant = await ctx.merchant();
      const privateAnswer = await merchant.call('GET', '/customers', undefined, { origin: 'https://any-shop.example' });
      assert.equal(privateAnswer.headers['access-control-allow-origin'], undefined);
    });
  });

  describe('signatureCase', () => {
    async function receiver(): Promise<Receiver> {
      const started = await startReceiver();
      receivers.push(started);
      return started;
    }

    /** The receiver's own check, as the Java SDK's Webhook.constructEvent: lower-case hex, compared exactly. */
    function verifiesLowerCase(request: ReceivedRequest, token: string): boolean {
      const requestTime = request.headers['request-time'] as string;
      const expected = createHmac('sha256', token)
        .update(Buffer.concat([Buffer.from(`${requestTime}.`), request.rawBody]))
        .digest('hex');
      return request.headers.signature === expected;
    }

    async function deliverPayment(merchant: TestMerchant, fields: Record<string, unknown> = {}): Promise<void> {
      await payment(merchant, { confirm: 'true', ...fields });
      await ctx.tessera.webhookDispatcher.runOnce();
    }

    test('an endpoint switched to lower is signed in lower-case hex that a case-sensitive verifier accepts', async () => {
      const merchant = await ctx.merchant();
      const target = await receiver();
      const created = ok(
        await merchant.call('POST', '/webhook_endpoints/create', { url: target.url(), legacyNotifications: false }),
      );
      assert.equal(created.signatureCase, 'upper');
      await deliverPayment(merchant);
      const [upper] = await target.waitFor(1);
      assert.equal(verifiesLowerCase(upper!, created.token), false);
      assert.match(String(upper!.headers.signature), /^[0-9A-F]{64}$/);

      const updated = ok(
        await merchant.call('POST', `/webhook_endpoints/${created.id}/update`, { signatureCase: 'lower' }),
      );
      assert.equal(updated.signatureCase, 'lower');
      assert.equal(ok(await merchant.call('GET', `/webhook_endpoints/${created.id}`)).signatureCase, 'lower');
      await deliverPayment(merchant);
      const [, lower] = await target.waitFor(2);
      assert.ok(verifiesLowerCase(lower!, created.token), String(lower!.headers.signature));
    });

    test('the dynamic notifyUrl endpoint has its own signatureCase', async () => {
      const merchant = await ctx.merchant();
      const target = await receiver();
      const endpoints = ok(await merchant.call('GET', '/webhook_endpoints'));
      const dynamic = endpoints.data.find((endpoint: { kind: string }) => endpoint.kind === 'dynamic');
      assert.equal(dynamic.signatureCase, 'upper');
      ok(
        await merchant.call('POST', `/webhook_endpoints/${dynamic.id}/update`, {
          signatureCase: 'lower',
          legacyNotifications: false,
        }),
      );
      const { token } = ok(await merchant.call('GET', `/webhook_endpoints/${dynamic.id}/reveal_token`));
      await deliverPayment(merchant, { notifyUrl: target.url('/notify') });
      const [request] = await target.waitFor(1);
      assert.ok(verifiesLowerCase(request!, token));
    });

    test('a new endpoint may be created lower; anything but upper or lower is refused naming signatureCase', async () => {
      const merchant = await ctx.merchant();
      const url = 'https://shop.example.com/hooks';
      assert.equal(
        ok(await merchant.call('POST', '/webhook_endpoints/create', { url, signatureCase: 'lower' })).signatureCase,
        'lower',
      );
      refused(
        await merchant.call('POST', '/webhook_endpoints/create', { url, signatureCase: 'mixed' }),
        'signatureCase',
      );
    });
  });
});
