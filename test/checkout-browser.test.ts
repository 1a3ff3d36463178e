/**
 * The hosted checkout page (docs/checkout.md) in a real browser (Debian's chromium through
 * playwright-core; without it these tests fail rather than skip: .ci/run installs it). A shopper
 * pays, is declined then pays, passes and fails 3-D Secure, cancels; each payment's notifyUrl
 * notification is received by a real HTTP receiver and its signature verified.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { type Browser, type Page } from 'playwright-core';
import { verifyWebhook } from '../sdk/verify-webhook.js';
import { dynamicEndpointToken, launchChromium } from './helpers/browser.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import {
  databaseKind,
  startTestApp,
  type TestContext,
  type TestMerchant,
  storeIndependent,
} from './helpers/harness.js';

const screenshots = '.test-screenshots';
const shopOrigin = 'https://shop.example';
const cards = {
  good: '4242 4242 4242 4242',
  declined: '4000 0000 0000 0002',
  threeDSecure: '4000 0025 0000 3155',
};

describe(`hosted checkout page in a browser (${databaseKind})`, { skip: storeIndependent }, () => {
  let ctx: TestContext;
  let receiver: Receiver;
  let browser: Browser;
  let page: Page;
  let shop: TestMerchant;
  let dynamicToken: string;

  before(async () => {
    mkdirSync(screenshots, { recursive: true });
    receiver = await startReceiver();
    ctx = await startTestApp();
    await ctx.tessera.server.listen({ port: 0, host: '127.0.0.1' });
    shop = await ctx.merchant({ name: 'Lovelace Tea Co.' });
    dynamicToken = await dynamicEndpointToken(shop);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 900, height: 900 } });
    // The shop's own pages (returnUrl, cancelUrl) are answered here: the browser never leaves the machine.
    await page.route(`${shopOrigin}/**`, (route) =>
      route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>Shop</title><p>Shop</p>' }),
    );
  });
  after(async () => {
    await browser?.close();
    await ctx?.close();
    await receiver?.close();
  });

  async function openSession(notifyPath: string) {
    const created = await shop.call('POST', '/checkout/session/create', {
      amountTotal: '3150',
      currency: 'USD',
      orderNo: `web-${notifyPath.slice(1)}`,
      lineItems: [
        { name: 'Earl Grey, 250 g', amount: '12.00', currency: 'USD', quantity: 2 },
        { name: 'Tea strainer', amount: '7.50', currency: 'USD', quantity: 1 },
      ],
      returnUrl: `${shopOrigin}/done?order=7`,
      cancelUrl: `${shopOrigin}/cart`,
      notifyUrl: receiver.url(notifyPath),
    });
    assert.equal(created.status, 200, created.raw);
    const { id, url } = created.body.data as { id: string; url: string };
    await page.goto(url);
    return id;
  }

  async function fillCard(cardNo: string) {
    await page.getByLabel('Card number').fill(cardNo);
    await page.getByLabel('Expiry (MM/YY)').fill('12/30');
    await page.getByLabel('Security code').fill('123');
    await page.getByLabel('Name on card').fill('Ada Lovelace');
    await page.getByRole('button', { name: 'Pay $31.50' }).click();
  }

  /** The shopper is back on the shop's returnUrl, with the payment's id added. */
  async function paymentIdOnReturn(): Promise<string> {
    await page.waitForURL(`${shopOrigin}/done?**`);
    const back = new URL(page.url());
    assert.equal(back.searchParams.get('order'), '7');
    const paymentId = back.searchParams.get('payment_id');
    assert.match(String(paymentId), /^pt_\d{19}$/);
    return paymentId!;
  }

  /** The notification of `paymentId` sent to the notifyUrl path, verified with the dynamic endpoint's token. */
  async function verifiedNotification(notifyPath: string, paymentId: string, type: string) {
    await ctx.tessera.webhookDispatcher.runOnce();
    const find = () =>
      receiver.requests.find(
        (candidate) =>
          candidate.path === notifyPath &&
          JSON.parse(candidate.body).type === type &&
          JSON.parse(candidate.body).data.id === paymentId,
      );
    // Each event is sent twice (docs/webhooks.md#what-is-sent): the endpoint_ kind is the one signed with the token.
    while (!find()) await receiver.waitFor(receiver.requests.length + 1, 10_000);
    const request = find()!;
    const event = verifyWebhook<{ id: string; status: string }>({
      headers: request.headers,
      rawBody: request.rawBody,
      token: dynamicToken,
      now: ctx.clock.now(),
    });
    assert.equal(event.type, type);
    assert.equal(event.data.id, paymentId);
    assert.doesNotMatch(request.body, /4242424242424242|4000002500003155/);
    return event;
  }

  const sessionOf = async (id: string) => (await shop.call('GET', `/checkout/session/${id}`)).body.data;

  it('shows the merchant and the order lines; a good card returns to the shop with payment_id', async () => {
    const id = await openSession('/good');
    assert.equal(await page.locator('h1').innerText(), 'Lovelace Tea Co.');
    const lines = await page.locator('table').innerText();
    assert.match(lines, /Earl Grey, 250 g\s+2\s+\$12\.00/);
    assert.match(lines, /Tea strainer\s+1\s+\$7\.50/);
    assert.match(await page.locator('#total').innerText(), /\$31\.50/);
    // A picture for people checking a run (docs/checkout.md's are taken by checkout-shopper-browser.test.ts).
    await page.screenshot({ path: `${screenshots}/checkout-page.png`, fullPage: true });
    await fillCard(cards.good);
    const paymentId = await paymentIdOnReturn();
    const session = await sessionOf(id);
    assert.equal(session.status, 'complete');
    assert.equal(session.paymentId, paymentId);
    await verifiedNotification('/good', paymentId, 'endpoint_payment.payment_succeeded');
  });

  it('a declined card shows the reason beside the form, never the card number; then a good card pays', async () => {
    const id = await openSession('/declined');
    await fillCard(cards.declined);
    await page.waitForSelector('#declined');
    // The decline in the shopper's words, not the processor's.
    assert.equal(
      await page.locator('#declined').innerText(),
      'Your card was declined. Try another card or contact your bank.',
    );
    assert.equal(await page.getByLabel('Card number').inputValue(), '');
    assert.doesNotMatch(await page.content(), /4000 ?0000 ?0000 ?0002/);
    await page.screenshot({ path: `${screenshots}/checkout-declined.png`, fullPage: true });
    assert.equal((await sessionOf(id)).status, 'open');
    await fillCard(cards.good);
    const paymentId = await paymentIdOnReturn();
    assert.equal((await sessionOf(id)).paymentId, paymentId);
    await verifiedNotification('/declined', paymentId, 'endpoint_payment.payment_succeeded');
  });

  it('the 3-D Secure challenge passed returns to the shop with payment_id', async () => {
    const id = await openSession('/three-d-secure');
    await fillCard(cards.threeDSecure);
    await page.waitForURL('**/3ds/**');
    await page.getByRole('button', { name: 'Pass' }).click();
    const paymentId = await paymentIdOnReturn();
    assert.equal((await sessionOf(id)).paymentId, paymentId);
    await verifiedNotification('/three-d-secure', paymentId, 'endpoint_payment.payment_succeeded');
  });

  it('the 3-D Secure challenge failed brings the shopper back to the form with the reason', async () => {
    const id = await openSession('/three-d-secure-failed');
    await fillCard(cards.threeDSecure);
    await page.waitForURL('**/3ds/**');
    await page.getByRole('button', { name: 'Fail' }).click();
    await page.waitForURL(`**/checkout/${id}**`);
    await page.waitForSelector('#declined');
    assert.match(await page.locator('#declined').innerText(), /Your bank could not confirm it is you/);
    assert.equal((await sessionOf(id)).status, 'open');
    // The shopper may try again on the same page.
    await fillCard(cards.good);
    const paymentId = await paymentIdOnReturn();
    await verifiedNotification('/three-d-secure-failed', paymentId, 'endpoint_payment.payment_succeeded');
  });

  it('cancel goes to the shop cancelUrl and leaves the session open', async () => {
    const id = await openSession('/cancel');
    await page.getByRole('link', { name: 'Cancel and return to the shop' }).click();
    await page.waitForURL(`${shopOrigin}/cart`);
    assert.equal((await sessionOf(id)).status, 'open');
  });
});
