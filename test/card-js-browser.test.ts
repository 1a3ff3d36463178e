/**
 * tessera.js in a real browser (Debian's chromium through playwright-core; .ci/run installs it).
 * The example shop of docs/examples (tessera-js-shop.mjs serving tessera-js.html) runs as its own
 * process on another origin than Tessera's: the shopper types the card into Tessera's frame, pays
 * and stores the card (the storing CIT), then the test charges the stored card with a MIT through
 * the API; each payment's notifyUrl delivery is received and its signature verified.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { type Browser, type Frame, type Page } from 'playwright-core';
import {
  databaseKind,
  startTestApp,
  type TestContext,
  type TestMerchant,
  storeIndependent,
} from './helpers/harness.js';
import { dynamicEndpointToken, launchChromium } from './helpers/browser.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { verifyWebhook } from '../sdk/verify-webhook.js';
import { seriousViolations } from './helpers/axe-audit.js';

const screenshots = '.test-screenshots';
const goodCard = '4242424242424242';
const challengeCard = '4000002500003155';

/** Starts docs/examples/tessera-js-shop.mjs as its README says, and answers its address. */
async function startShop(env: Record<string, string>): Promise<{ process: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ['docs/examples/tessera-js-shop.mjs'], {
    env: { ...process.env, ...env, SHOP_PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const match = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output);
      if (match) resolve(Number(match[1]));
    });
    child.on('exit', (code) => reject(new Error(`the shop exited (${code})`)));
  });
  return { process: child, port };
}

describe(`tessera.js in a browser (${databaseKind})`, { skip: storeIndependent }, () => {
  let ctx: TestContext;
  let merchant: TestMerchant;
  let receiver: Receiver;
  let shop: { process: ChildProcess; port: number };
  let shopUrl: string;
  let browser: Browser;
  let dynamicToken: string;

  before(async () => {
    mkdirSync(screenshots, { recursive: true });
    receiver = await startReceiver();
    ctx = await startTestApp();
    await ctx.tessera.server.listen({ port: 0, host: '127.0.0.1' });
    merchant = await ctx.merchant({ name: 'Example shop' });
    shop = await startShop({
      TESSERA_URL: ctx.tessera.publicUrl(),
      TESSERA_PRIVATE_KEY: merchant.privateKey,
      TESSERA_PUBLIC_KEY: merchant.publicKey,
      SHOP_NOTIFY_URL: receiver.url('/notify'),
    });
    // Tessera is on 127.0.0.1, the shop's page on localhost: two origins, as in production.
    shopUrl = `http://localhost:${shop.port}`;
    const origins = await ctx.tessera.server.inject({
      method: 'POST',
      url: `/admin/v1/merchants/${merchant.id}/update`,
      headers: { authorization: `Bearer ${ctx.operatorKey}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ websiteOrigins: [shopUrl] }),
    });
    assert.equal(origins.statusCode, 200, origins.body);
    dynamicToken = await dynamicEndpointToken(merchant);
    ctx.tessera.webhookDispatcher.start();
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    shop?.process.kill();
    await ctx?.close();
    await receiver?.close();
  });

  /** The card frame of the page: Tessera's origin, once its script said it is ready. */
  async function cardFrame(page: Page): Promise<Frame> {
    const element = await page.waitForSelector('#card iframe');
    const frame = (await element.contentFrame())!;
    await frame.waitForSelector('#cardNo');
    assert.equal(new URL(frame.url()).origin, ctx.tessera.publicUrl());
    return frame;
  }

  async function typeCard(frame: Frame, number: string) {
    await frame.getByLabel('Card number').fill(number);
    await frame.getByLabel('Expiry').fill('12/30');
    await frame.getByLabel('Security code').fill('123');
  }

  /** The endpoint-kind notification of `paymentId` sent to the notifyUrl, verified with the dynamic token. */
  async function verifiedNotification(paymentId: string, type: string) {
    for (let count = 1; ; count += 1) {
      const requests = await receiver.waitFor(count, 10_000);
      for (const request of requests) {
        if (request.path !== '/notify') continue;
        const body = JSON.parse(request.body) as { type: string; data: { id: string } };
        if (body.type !== type || body.data.id !== paymentId) continue;
        const event = verifyWebhook({
          headers: request.headers,
          rawBody: request.rawBody,
          token: dynamicToken,
          now: ctx.clock.now(),
        });
        return event;
      }
    }
  }

  /** The shop page's outcome once the Pay click has one ("Paid: …" or "Not paid: …"), as the shopper reads it. */
  async function outcomeOf(page: Page): Promise<string> {
    const result = page.locator('#result').filter({ hasText: /^(Not p|P)aid: / });
    await result.waitFor();
    return result.innerText();
  }

  async function openShop(): Promise<{ page: Page; frame: Frame; typedIntoPage: string[] }> {
    const page = await browser.newPage({ viewport: { width: 800, height: 760 } });
    // Playwright's 30 s for each wait ran out once for the 3-D Secure pop-up while two suites and
    // four engineers' work shared the 2 cores; the context's timeout covers the pop-up too.
    page.context().setDefaultTimeout(90_000);
    const typedIntoPage: string[] = [];
    // Every request the shop's page makes: none may carry the card number (only the frame's may).
    page.on('request', (request) => {
      if (request.frame() === page.mainFrame()) typedIntoPage.push(`${request.url()} ${request.postData() ?? ''}`);
    });
    await page.goto(shopUrl);
    return { page, frame: await cardFrame(page), typedIntoPage };
  }

  it('pays and stores the card typed into the frame (CIT), then charges it with a MIT through the API', async () => {
    const { page, frame, typedIntoPage } = await openShop();
    await page.screenshot({ path: `${screenshots}/tessera-js-empty.png` });
    await typeCard(frame, goodCard);
    // The shop's page, its DOM and its scripts' view of it, never holds the number.
    assert.ok(!(await page.content()).includes(goodCard));
    assert.equal(await page.evaluate(() => document.body.innerText.includes('4242424242')), false);
    // mountCard's amount and currency, written by the frame in the shopper's language.
    await page.getByRole('button', { name: 'Pay $25.00' }).click();
    const result = page.locator('#result');
    assert.match(await outcomeOf(page), /^Paid: succeeded, visa •••• 4242 \(pt_\d{19}\)/);
    const paymentId = (await result.getAttribute('data-payment-id'))!;
    const paymentMethod = (await result.getAttribute('data-payment-method'))!;
    const customerId = (await result.getAttribute('data-customer-id'))!;
    assert.ok(!(await page.content()).includes(goodCard));
    assert.ok(typedIntoPage.length > 0);
    for (const request of typedIntoPage)
      assert.ok(!request.includes(goodCard) && !request.includes('4242 4242'), request);

    const stored = await merchant.call('GET', `/payment/${paymentId}`);
    assert.equal(stored.body.data.status, 'succeeded');
    assert.equal(stored.body.data.setupFutureUsage, 'on');
    assert.equal(stored.body.data.customerId, customerId);
    assert.equal(stored.body.data.paymentMethod, paymentMethod);
    const method = await merchant.call('GET', `/payment_methods/${paymentMethod}`);
    assert.equal(method.body.data.customerId, customerId);
    const first = await verifiedNotification(paymentId, 'endpoint_payment.payment_succeeded');
    assert.equal(first.data.id, paymentId);

    const mit = await merchant.call('POST', '/payment/create', {
      amount: '1200',
      currency: 'USD',
      customerId,
      paymentMethod,
      confirm: true,
      setupFutureUsage: 'on',
      subsequentInitialType: 'mit',
      notifyUrl: receiver.url('/notify'),
    });
    assert.equal(mit.status, 200, mit.raw);
    assert.equal(mit.body.data.status, 'succeeded');
    assert.equal(mit.body.data.subsequentInitialType, 'mit');
    const second = await verifiedNotification(mit.body.data.id, 'endpoint_payment.payment_succeeded');
    assert.equal(second.data.id, mit.body.data.id);
    await page.close();
  });

  it('runs the 3-D Secure challenge in a pop-up and reports a refused card beside the field', async () => {
    const { page, frame } = await openShop();
    // Only a field already typed in is judged: the number is empty, the expiry wrong.
    await frame.getByLabel('Expiry').fill('13/30');
    await frame.getByLabel('Expiry').blur();
    // In the shopper's words, never the API's (`card.expMonth must be…`).
    await frame.locator('#error').filter({ hasText: 'The expiry month must be from 01 to 12.' }).waitFor();
    await page.locator('#result').filter({ hasText: 'The expiry month must be from 01 to 12.' }).waitFor();
    // docs/images/tessera-js-card-field.png is this picture: the field mounted, no card number in it.
    await page.screenshot({ path: `${screenshots}/tessera-js-card-field.png` });
    await frame.getByLabel('Card number').fill('4242424242424241');
    await frame.getByLabel('Card number').blur();
    // The first wrong field is named, in the frame and to the page, without any digit of the card.
    await frame.locator('#error').filter({ hasText: 'Your card number is invalid.' }).waitFor();
    await page.locator('#result').filter({ hasText: 'Your card number is invalid.' }).waitFor();
    // Spaced in fours, the brand shown as typed.
    assert.equal(await frame.getByLabel('Card number').inputValue(), '4242 4242 4242 4241');
    await frame.locator('#card-brand').filter({ hasText: 'Visa' }).waitFor();
    assert.deepEqual(await seriousViolations(frame), []);
    await typeCard(frame, challengeCard);
    // The first two reads of the watched payment fail (Tessera not reached, then busy): a read that
    // fails says nothing of the payment, so tessera.js asks again rather than calling it unpaid.
    const failedReads: string[] = [];
    await page.route(/\/api\/services\/v1\/payment\/pt_\d+$/, async (route) => {
      if (route.request().method() !== 'GET' || failedReads.length === 2) return route.continue();
      if (failedReads.push(route.request().url()) === 1) return route.abort('connectionrefused');
      return route.fulfill({
        status: 503,
        contentType: 'application/json',
        body: JSON.stringify({ code: 'service_unavailable', msg: 'retry shortly', data: null }),
      });
    });
    const popupOpened = page.waitForEvent('popup');
    await page.getByRole('button', { name: 'Pay $25.00' }).click();
    const popup = await popupOpened;
    await popup.getByRole('heading', { name: '3-D Secure authentication' }).waitFor();
    await popup.getByRole('button', { name: 'Pass' }).click();
    assert.match(await outcomeOf(page), /^Paid: succeeded/);
    assert.equal(failedReads.length, 2);
    const paymentId = (await page.locator('#result').getAttribute('data-payment-id'))!;
    const payment = await merchant.call('GET', `/payment/${paymentId}`);
    assert.equal(payment.body.data.status, 'succeeded');
    assert.equal(payment.body.data.use3D, true);
    await verifiedNotification(paymentId, 'endpoint_payment.payment_succeeded');
    await page.close();
  });

  it("runs 3-D Secure by redirect with handleActions 'redirect', back to the returnUrl with payment_id", async () => {
    const { page } = await openShop();
    // A payment of the shop's server, its card given through the API here (this test is the server).
    const method = await merchant.call('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo: challengeCard, expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    const created = await merchant.call('POST', '/payment/create', {
      amount: '900',
      currency: 'USD',
      notifyUrl: receiver.url('/notify'),
    });
    assert.equal(created.status, 200, created.raw);
    const returnUrl = `${shopUrl}/?order=7`;
    const navigated = page.waitForURL(/\/3ds\/pt_/);
    // Not awaited in the page: its promise never settles, since the page leaves for the challenge.
    await page.evaluate(
      ([publicKey, secret, paymentMethod, back]) => {
        void (window as any)
          .Tessera(publicKey)
          .confirmPayment(secret, { paymentMethod, handleActions: 'redirect', returnUrl: back });
      },
      [merchant.publicKey, created.body.data.clientSecret, method.body.data.id, returnUrl] as const,
    );
    await navigated;
    await page.getByRole('button', { name: 'Pass' }).click();
    await page.waitForURL((url) => url.origin === shopUrl && url.searchParams.has('payment_id'));
    const back = new URL(page.url());
    assert.equal(back.searchParams.get('order'), '7');
    assert.equal(back.searchParams.get('payment_id'), created.body.data.id);
    const payment = await merchant.call('GET', `/payment/${created.body.data.id}`);
    assert.equal(payment.body.data.status, 'succeeded');
    await verifiedNotification(created.body.data.id, 'endpoint_payment.payment_succeeded');
    await page.close();
  });

  it("does not show the card field in a page of an origin that is not the merchant's", async () => {
    const page = await browser.newPage();
    // The same shop page, reached by another origin (127.0.0.1 rather than localhost).
    await page.goto(`http://127.0.0.1:${shop.port}`);
    const element = await page.waitForSelector('#card iframe');
    const frame = (await element.contentFrame())!;
    await frame.waitForLoadState('load');
    // Refused twice: the server answers 403 for the origin, and the browser blocks the framing (CSP).
    assert.equal(await frame.$('#cardNo'), null);
    assert.equal(await frame.$('#card-form'), null);
    await page.close();
  });
});
