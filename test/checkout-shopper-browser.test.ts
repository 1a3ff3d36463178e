/**
 * What a shopper sees on the hosted checkout and invoice pages (issue 22, docs/checkout.md#the-page), in a real
 * browser (Debian's chromium through playwright-core; .ci/run installs it): the amount on the Pay
 * button, the brand shown and the number spaced as typed, Luhn and expiry checked as typed and
 * read out (aria-live), the shopper's language (the session's locale, else Accept-Language, Arabic
 * right to left), the merchant's colour and logo, payment with the keyboard alone, the page without
 * script, no serious or critical axe-core violation, and under 100 kB transferred. The pictures of
 * docs/checkout.md are taken here, at 1280 and 390 px, with no card number in them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { seriousViolations } from './helpers/axe-audit.js';
import { launchChromium, picturesNotTaken } from './helpers/browser.js';
import {
  databaseKind,
  startTestApp,
  type TestContext,
  type TestMerchant,
  storeIndependent,
} from './helpers/harness.js';

const images = 'docs/images';
const startedMs = Date.now();
// Every wait is bounded: a page that never answers fails its test instead of holding up the run.
const testTimeoutMs = 120_000;
const actionTimeoutMs = 15_000;
const navigationTimeoutMs = 30_000;
const shopOrigin = 'https://shop.example';
const logo = 'https://cdn.shop.example/logo.png';
// A 1×1 PNG, the shop's logo as its CDN would answer it.
const logoPng = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

describe(`hosted pages for shoppers in a browser (${databaseKind})`, { skip: storeIndependent }, () => {
  let ctx: TestContext;
  let browser: Browser;
  let shop: TestMerchant;

  before(
    async () => {
      ctx = await startTestApp();
      await ctx.tessera.server.listen({ port: 0, host: '127.0.0.1' });
      shop = await ctx.merchant({ name: 'Lovelace Tea Co.' });
      const branded = await ctx.tessera.server.inject({
        method: 'POST',
        url: `/admin/v1/merchants/${shop.id}/update`,
        headers: { authorization: `Bearer ${ctx.operatorKey}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ brandColor: '#0E7C66', logoUrl: logo }),
      });
      assert.equal(branded.statusCode, 200, branded.body);
      browser = await launchChromium();
    },
    { timeout: testTimeoutMs },
  );
  after(
    async () => {
      await browser?.close();
      await ctx?.close();
    },
    { timeout: testTimeoutMs },
  );

  /** A browser profile in the shopper's language, its shop pages answered here. */
  async function shopper(options: { locale?: string; width?: number; javaScript?: boolean } = {}) {
    const page = await browser.newPage({
      locale: options.locale ?? 'en-US',
      viewport: { width: options.width ?? 1280, height: 900 },
      javaScriptEnabled: options.javaScript ?? true,
    });
    page.setDefaultTimeout(actionTimeoutMs);
    page.setDefaultNavigationTimeout(navigationTimeoutMs);
    const context: BrowserContext = page.context();
    await page.route(logo, (route) => route.fulfill({ status: 200, contentType: 'image/png', body: logoPng }));
    await page.route(`${shopOrigin}/**`, (route) =>
      route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>Shop</title><p>Shop</p>' }),
    );
    return { context, page };
  }

  async function openSession(page: Page, extra: Record<string, unknown> = {}) {
    const created = await shop.call('POST', '/checkout/session/create', {
      amountTotal: '3150',
      currency: 'EUR',
      lineItems: [
        { name: 'Earl Grey, 250 g', amount: '12.00', currency: 'EUR', quantity: 2 },
        { name: 'Tea strainer', amount: '7.50', currency: 'EUR', quantity: 1 },
      ],
      returnUrl: `${shopOrigin}/done?order=7`,
      cancelUrl: `${shopOrigin}/cart`,
      ...extra,
    });
    assert.equal(created.status, 200, created.raw);
    await page.goto(created.body.data.url);
    return created.body.data as { id: string; url: string; locale: string };
  }

  /** The picture of docs/checkout.md, taken only while no card number is in the page. */
  async function picture(page: Page, name: string) {
    assert.equal(await page.locator('#cardNo').inputValue(), '', 'no card number in a picture');
    await page.screenshot({ path: `${images}/${name}.png`, fullPage: true });
  }

  it(
    'puts the amount on the Pay button, shows the brand and spaces the number as typed, checks Luhn and expiry as typed, and reads the mistakes out',
    { timeout: testTimeoutMs },
    async () => {
      const { context, page } = await shopper();
      const session = await openSession(page);
      assert.equal(session.locale, 'auto');
      assert.equal(await page.locator('html').getAttribute('lang'), 'en');
      await page.getByRole('button', { name: 'Pay €31.50' }).waitFor();
      assert.match(await page.locator('#total').innerText(), /€31\.50/);
      assert.equal(await page.locator('header img').getAttribute('src'), logo);
      await picture(page, 'checkout-1280');
      assert.deepEqual(await seriousViolations(page), []);

      const number = page.getByLabel('Card number');
      await number.pressSequentially('4242424242424241');
      assert.equal(await number.inputValue(), '4242 4242 4242 4241');
      // The brand is shown, and read out with its label ("Card type: Visa").
      assert.match((await page.locator('#card-brand').textContent()) ?? '', /^Card type: Visa$/);
      assert.equal(await page.locator('#card-brand').getAttribute('data-brand'), 'visa');
      // Luhn, as typed: the message is in the field's live region, tied to the field.
      const numberLive = page.locator('#cardNo-live');
      assert.equal(await numberLive.getAttribute('aria-live'), 'polite');
      await numberLive.filter({ hasText: 'Your card number is invalid' }).waitFor();
      assert.equal(await number.getAttribute('aria-invalid'), 'true');
      assert.deepEqual(await seriousViolations(page), []);
      await number.press('Backspace');
      await number.pressSequentially('2');
      assert.equal(await numberLive.innerText(), '');
      assert.equal(await number.getAttribute('aria-invalid'), null);

      await number.fill('');
      await number.pressSequentially('378282246310005');
      assert.equal(await number.inputValue(), '3782 822463 10005');
      await page.locator('#card-brand').filter({ hasText: 'American Express' }).waitFor();

      const expiry = page.getByLabel('Expiry (MM/YY)');
      await expiry.pressSequentially('13');
      await page.locator('#expiry-live').filter({ hasText: 'The expiry month must be from 01 to 12.' }).waitFor();
      await expiry.fill('');
      await expiry.pressSequentially('0120');
      assert.equal(await expiry.inputValue(), '01 / 20');
      await page.locator('#expiry-live').filter({ hasText: 'Your card has expired.' }).waitFor();
      // Nothing the shopper reads names an API field.
      assert.doesNotMatch(await page.locator('main').innerText(), /card\.[a-z]|expMonth|cardNo/i);
      await context.close();
    },
  );

  it(
    'is paid with the keyboard alone: Tab, typing, a mistake read out and mended, Enter on the Pay button',
    { timeout: testTimeoutMs },
    async () => {
      const { context, page } = await shopper();
      const session = await openSession(page);
      const focused = () => page.evaluate(() => document.activeElement?.id);
      await page.keyboard.press('Tab');
      assert.equal(await focused(), 'cardNo');
      await page.keyboard.type('4242424242424242');
      await page.keyboard.press('Tab');
      assert.equal(await focused(), 'expiry');
      // A mistake is announced where a screen reader hears it: the field's live region, tied to the field.
      await page.keyboard.type('13');
      const expiryLive = page.locator('#expiry-live');
      assert.equal(await expiryLive.getAttribute('aria-live'), 'polite');
      await expiryLive.filter({ hasText: 'The expiry month must be from 01 to 12.' }).waitFor();
      assert.equal(await page.locator('#expiry').getAttribute('aria-invalid'), 'true');
      assert.match(String(await page.locator('#expiry').getAttribute('aria-describedby')), /\bexpiry-live\b/);
      await page.keyboard.press('ControlOrMeta+A');
      await page.keyboard.press('Backspace');
      await page.keyboard.type('1230');
      assert.equal(await page.locator('#expiry').inputValue(), '12 / 30');
      await expiryLive.filter({ hasText: 'The expiry month' }).waitFor({ state: 'detached' });
      assert.equal(await page.locator('#expiry').getAttribute('aria-invalid'), null);
      await page.keyboard.press('Tab');
      assert.equal(await focused(), 'securityCode');
      await page.keyboard.type('123');
      await page.keyboard.press('Tab');
      assert.equal(await focused(), 'name');
      await page.keyboard.type('Ada Lovelace');
      await page.keyboard.press('Tab');
      assert.equal(await focused(), 'pay');
      // The shopper is sent back to the shop (the request is enough: the shop's page is not Tessera's).
      const back = page.waitForRequest((request) => request.url().startsWith(`${shopOrigin}/done?`));
      await page.keyboard.press('Enter');
      const paymentId = new URL((await back).url()).searchParams.get('payment_id');
      assert.match(String(paymentId), /^pt_\d{19}$/);
      const paid = await shop.call('GET', `/checkout/session/${session.id}`);
      assert.equal(paid.body.data.status, 'complete');
      assert.equal(paid.body.data.paymentId, paymentId);
      await context.close();
    },
  );

  it(
    "an empty form is refused by the script in the shopper's words, focus on the first field, nothing posted",
    { timeout: testTimeoutMs },
    async () => {
      const { context, page } = await shopper();
      await openSession(page);
      let posted = 0;
      page.on('request', (request) => {
        if (request.method() === 'POST') posted += 1;
      });
      await page.getByRole('button', { name: /Pay/ }).click();
      await page.locator('#cardNo-live').filter({ hasText: 'Enter your card number.' }).waitFor();
      await page.locator('#name-live').filter({ hasText: 'Enter the name as it appears on your card.' }).waitFor();
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'cardNo');
      assert.equal(posted, 0);
      assert.deepEqual(await seriousViolations(page), []);
      await context.close();
    },
  );

  it("speaks the session's locale over the browser's: German", { timeout: testTimeoutMs }, async () => {
    const { context, page } = await shopper({ locale: 'fr-FR' });
    const session = await openSession(page, { locale: 'de' });
    assert.equal(session.locale, 'de');
    assert.equal(await page.locator('html').getAttribute('lang'), 'de');
    await page.getByRole('button', { name: '31,50 € bezahlen' }).waitFor();
    await page.getByLabel('Kartennummer').pressSequentially('4242424242424241');
    await page.locator('#cardNo-live').filter({ hasText: 'Ihre Kartennummer ist ungültig' }).waitFor();
    assert.deepEqual(await seriousViolations(page), []);
    await context.close();
  });

  it("speaks the browser's language without a locale: Arabic, right to left", { timeout: testTimeoutMs }, async () => {
    const { context, page } = await shopper({ locale: 'ar-EG', width: 390 });
    await openSession(page);
    assert.equal(await page.locator('html').getAttribute('lang'), 'ar');
    assert.equal(await page.locator('html').getAttribute('dir'), 'rtl');
    await page.getByRole('button', { name: /^ادفع / }).waitFor();
    await picture(page, 'checkout-ar-390');
    await page.getByLabel('رقم البطاقة').pressSequentially('4242424242424241');
    await page.locator('#cardNo-live').filter({ hasText: 'رقم بطاقتك غير صالح' }).waitFor();
    assert.deepEqual(await seriousViolations(page), []);
    // Nothing scrolls sideways on a phone.
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth));
    await context.close();
  });

  it(
    'works without script, in French: the server checks the form in the same words, explains a decline, and the shopper pays and lands on the return URL',
    { timeout: testTimeoutMs },
    async () => {
      const { context, page } = await shopper({ locale: 'fr-FR', javaScript: false, width: 390 });
      const session = await openSession(page, { locale: 'fr' });
      assert.equal(await page.locator('html').getAttribute('lang'), 'fr');
      await picture(page, 'checkout-390');
      const number = page.getByLabel('Numéro de carte');
      const expiry = page.getByLabel('Date d’expiration (MM/AA)');
      const code = page.getByLabel('Cryptogramme (CVC)');
      const pay = page.getByRole('button', { name: 'Payer 31,50 €' });
      await number.fill('4242 4242 4242 4241');
      await expiry.fill('13/30');
      await code.fill('123');
      await page.getByLabel('Nom sur la carte').fill('Ada Lovelace');
      // Without script nothing spaces the number or names its brand as it is typed: the server does the checking.
      assert.equal(await page.locator('#card-brand').textContent(), '');
      await pay.click();
      await page.locator('#cardNo-error').filter({ hasText: 'Votre numéro de carte n’est pas valide' }).waitFor();
      assert.match(
        await page.locator('#expiry-error').innerText(),
        /Le mois d’expiration doit être compris entre 01 et 12/,
      );
      // The number is never written back into the page; the field is marked, described and focused.
      assert.equal(await number.inputValue(), '');
      assert.equal(await number.getAttribute('aria-invalid'), 'true');
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'cardNo');
      assert.equal(await page.getByLabel('Nom sur la carte').inputValue(), 'Ada Lovelace');
      assert.deepEqual(await seriousViolations(page, { withoutScript: true }), []);

      await number.fill('4000 0000 0000 0002');
      await expiry.fill('12/30');
      await code.fill('123');
      await pay.click();
      await page.locator('#declined').filter({ hasText: 'Votre carte a été refusée.' }).waitFor();
      assert.equal(await page.locator('#declined').getAttribute('role'), 'alert');
      await picture(page, 'checkout-declined-390');
      assert.deepEqual(await seriousViolations(page, { withoutScript: true }), []);
      assert.equal((await shop.call('GET', `/checkout/session/${session.id}`)).body.data.status, 'open');

      // A declined card is typed again, all of it (the page keeps no card detail), and without
      // script after the audits: the number stays as typed, unspaced.
      await number.fill('4242424242424242');
      assert.equal(await number.inputValue(), '4242424242424242');
      await expiry.fill('12/30');
      await code.fill('123');
      await page.getByLabel('Nom sur la carte').fill('Ada Lovelace');
      await pay.click();
      await page.waitForURL((url) => url.origin === shopOrigin && url.pathname === '/done');
      const landed = new URL(page.url());
      assert.equal(landed.searchParams.get('order'), '7');
      const paid = await shop.call('GET', `/checkout/session/${session.id}`);
      assert.equal(paid.body.data.status, 'complete');
      assert.equal(landed.searchParams.get('payment_id'), paid.body.data.paymentId);
      await context.close();
    },
  );

  it(
    'the hosted invoice page in Dutch: amount on the button, the brand as typed, accessible, and paid',
    { timeout: testTimeoutMs },
    async () => {
      const customer = await shop.call('POST', '/customers/create', {
        email: 'grace@example.com',
        firstName: 'Grace',
        lastName: 'Hopper',
      });
      assert.equal(customer.status, 200, customer.raw);
      const created = await shop.call('POST', '/invoices/create', {
        customerId: customer.body.data.id,
        currency: 'EUR',
        lineItems: [{ description: 'Tea club, monthly', amount: '1990', quantity: 2 }],
        collectionMethod: 'send_invoice',
        daysUntilDue: 10,
      });
      assert.equal(created.status, 200, created.raw);
      const open = await shop.call('POST', `/invoices/${created.body.data.id}/finalize`);
      assert.equal(open.status, 200, open.raw);
      const { context, page } = await shopper({ locale: 'nl-NL', width: 390 });
      await page.goto(open.body.data.hostedInvoiceUrl);
      assert.equal(await page.locator('html').getAttribute('lang'), 'nl');
      const pay = page.getByRole('button', { name: '€ 39,80 betalen' });
      await pay.waitFor();
      await picture(page, 'invoice-390');
      assert.deepEqual(await seriousViolations(page), []);
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth));
      const number = page.getByLabel('Kaartnummer');
      await number.pressSequentially('5555555555554444');
      await page.locator('#card-brand').filter({ hasText: 'Mastercard' }).waitFor();
      assert.equal(await number.inputValue(), '5555 5555 5555 4444');
      await page.locator('#expiry').pressSequentially('1230');
      await page.locator('#securityCode').pressSequentially('123');
      await page.locator('#name').pressSequentially('Grace Hopper');
      await pay.click();
      await page.locator('.status.paid').waitFor();
      assert.equal((await shop.call('GET', `/invoices/${created.body.data.id}`)).body.data.status, 'paid');
      await context.close();
    },
  );

  it(
    'stays under 100 kB transferred: the page, its scripts and the logo, every response counted in Chromium',
    { timeout: testTimeoutMs },
    async () => {
      const { context, page } = await shopper();
      // Chromium's own count of the bytes each response took on the wire, headers included.
      const devtools = await context.newCDPSession(page);
      await devtools.send('Network.enable');
      const responses = new Map<string, string>();
      const bytes = new Map<string, number>();
      devtools.on('Network.responseReceived', (event) => responses.set(event.requestId, event.response.url));
      devtools.on('Network.loadingFinished', (event) => bytes.set(event.requestId, event.encodedDataLength));
      await openSession(page);
      await page.waitForLoadState('networkidle');
      await devtools.detach();
      const urls = [...responses.values()];
      assert.ok(
        urls.some((url) => url.includes('/checkout/cs_')),
        urls.join(', '),
      );
      assert.ok(
        urls.some((url) => url.endsWith('/js/v1/card-input.js')),
        urls.join(', '),
      );
      assert.ok(
        urls.some((url) => url.endsWith('/js/v1/hosted-form.js')),
        urls.join(', '),
      );
      assert.ok(urls.includes(logo), urls.join(', '));
      const transferred = [...bytes.values()].reduce((sum, size) => sum + size, 0);
      assert.ok(transferred > 1_000, `${transferred} bytes counted: the page itself is more`);
      assert.ok(transferred < 100_000, `${transferred} bytes`);
      await context.close();
    },
  );

  it("has taken, in this run, every picture of the hosted pages docs/checkout.md shows (the card field is card-js-browser's)", () => {
    assert.deepEqual(
      picturesNotTaken('docs/checkout.md', startedMs, (name) => !name.startsWith('tessera-js')),
      [],
    );
  });
});
