/**
 * The dashboard in a real browser (Debian's chromium through playwright-core). Without chromium
 * these tests fail rather than skip: .ci/run installs it.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { type Browser, type Page } from 'playwright-core';
import { startTestApp, type TestContext, storeIndependent } from './helpers/harness.js';
import { startSmtpServer, type SmtpTestServer } from './helpers/smtp.js';
import { launchChromium, picturesNotTaken } from './helpers/browser.js';
import { auditAtDeskAndPhone, axeInEveryDocument, scrollsSideways, seriousViolations } from './helpers/axe.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { verifyWebhook } from '../sdk/verify-webhook.js';

const screenshots = '.test-screenshots';
/** The pictures of docs/dashboard.md are taken by these tests (issue 22), so they show what ships. */
const docImages = 'docs/images';
const password = 'correct horse battery';
const startedMs = Date.now();

describe('dashboard in a browser', { skip: storeIndependent }, () => {
  let ctx: TestContext;
  let smtp: SmtpTestServer;
  let receiver: Receiver;
  let browser: Browser;
  let page: Page;
  let base: string;
  let privateKey: string;
  let ownerLink: string;
  let merchantId: string;

  before(async () => {
    mkdirSync(screenshots, { recursive: true });
    smtp = await startSmtpServer();
    receiver = await startReceiver();
    ctx = await startTestApp({ env: { TESSERA_SMTP_URL: smtp.url } });
    await ctx.tessera.server.listen({ port: 0, host: '127.0.0.1' });
    base = ctx.tessera.publicUrl();
    const created = await ctx.tessera.server.inject({
      method: 'POST',
      url: '/admin/v1/merchants/create',
      headers: { authorization: `Bearer ${ctx.operatorKey}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'Browser shop', tokenization: true, ownerEmail: 'owner@browser.test' }),
    });
    privateKey = created.json().data.keys.privateKey;
    merchantId = created.json().data.id;
    ownerLink = created.json().data.ownerSetPasswordUrl;
    // A live processor account, for the Owner's Settings (its long webhook URL at 390 px too); live
    // only, so that the test payments below still go to the sandbox.
    const connected = await ctx.tessera.server.inject({
      method: 'POST',
      url: `/admin/v1/merchants/${merchantId}/processor_accounts/create`,
      headers: { authorization: `Bearer ${ctx.operatorKey}`, 'content-type': 'application/json' },
      payload: JSON.stringify({
        processor: 'stripe',
        mode: 'live',
        credentials: { secretKey: 'sk_live_BrowserShopKey0001Abcd', webhookSecret: 'whsec_BrowserShopSigning0001' },
        baseUrl: 'http://127.0.0.1:9',
      }),
    });
    assert.equal(connected.statusCode, 200, connected.body);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  });
  after(async () => {
    await browser?.close();
    await ctx?.close();
    await receiver?.close();
    await smtp?.close();
  });

  const api = async (path: string, body: unknown) => {
    const answer = await ctx.tessera.server.inject({
      method: 'POST',
      url: `/api/services/v1${path}`,
      headers: { authorization: `Bearer ${privateKey}`, 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
    return answer.json().data;
  };

  const apiGet = async (path: string) => {
    const answer = await ctx.tessera.server.inject({
      method: 'GET',
      url: `/api/services/v1${path}`,
      headers: { authorization: `Bearer ${privateKey}` },
    });
    return answer.json().data;
  };

  /** The one-time set-password link of a mail (quoted-printable undone). */
  const setPasswordLink = (raw: string) =>
    /https?:\/\/\S+\/dashboard\/set-password\?token=[A-Za-z0-9_-]+/.exec(
      raw.replace(/=\r?\n/g, '').replace(/=3D/g, '='),
    )![0];

  /** The page at both widths, its findings added to the lists (test/helpers/axe.ts). */
  const auditAtBothWidths = (target: Page, name: string, accessibility: string[], sideways: string[]) =>
    auditAtDeskAndPhone(target, { accessibility, sideways }, name);

  const pay = async (amount: string) => {
    const method = await api('/payment_methods/create', {
      type: 'card',
      card: { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    return api('/payment/create', { amount, currency: 'USD', confirm: true, paymentMethod: method.id });
  };

  it('sets the Owner password through the one-time link, then signs in with the right password only', async () => {
    await page.goto(ownerLink);
    await page.getByLabel('New password').fill('short');
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    assert.match(await page.locator('#f-password-error').innerText(), /at least 10 characters/);
    await page.getByLabel('New password').fill(password);
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('E-mail').fill('owner@browser.test');
    await page.getByLabel('Password').fill('wrong password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    assert.match(await page.getByRole('alert').innerText(), /not right/);
    assert.equal(await page.getByLabel('E-mail').inputValue(), 'owner@browser.test');
    assert.deepEqual(await seriousViolations(page), []);
    await page.screenshot({ path: `${screenshots}/sign-in.png` });
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Home' }).waitFor();
  });

  it('invites a developer by e-mail through the real SMTP server, who accepts', async () => {
    await page.goto(`${base}/dashboard/team`);
    await page.getByLabel('E-mail').fill('dev@browser.test');
    await page.getByLabel('Name').fill('Dev');
    await page.getByLabel('Role', { exact: true }).selectOption('developer');
    await page.getByRole('button', { name: 'Send invitation' }).click();
    const [mail] = await smtp.waitFor(1);
    assert.deepEqual(mail!.to, ['dev@browser.test']);
    const link = setPasswordLink(mail!.raw);
    await page.screenshot({ path: `${screenshots}/team.png`, fullPage: true });
    const other = await browser.newPage();
    await other.goto(link);
    await other.getByLabel('New password').fill(password);
    await other.getByRole('button', { name: 'Set password and sign in' }).click();
    await other.getByText('Dev (Developer)').waitFor();
    await other.close();
  });

  it('reveals the token only after the click, rolls it, and a real delivery is signed with the new token', async () => {
    await page.goto(`${base}/dashboard/developers/webhooks`);
    await page.getByLabel('URL').fill(receiver.url());
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const before = await page.content();
    assert.doesNotMatch(before, /id="token"/);
    await page.getByRole('button', { name: 'Reveal token' }).click();
    const revealed = await page.locator('#token').innerText();
    await page.getByRole('button', { name: 'Roll token' }).click();
    const rolled = await page.locator('#token').innerText();
    assert.notEqual(rolled, revealed);
    await page.screenshot({ path: `${screenshots}/endpoint.png`, fullPage: true });
    await pay('2000');
    await ctx.tessera.webhookDispatcher.runOnce();
    // One notification per event: legacy notifications are opt-in (docs/decisions/0014-legacy-opt-in-and-sequence.md).
    const request = (await receiver.waitFor(1)).find((candidate) => candidate.body.includes('"type":"endpoint_'));
    const event = verifyWebhook({
      headers: request!.headers,
      rawBody: request!.rawBody,
      token: rolled,
      now: ctx.clock.now(),
    });
    assert.ok(event.id);
    const audit = await ctx.tessera.db.query<{ action: string }>(
      "SELECT action FROM audit_log WHERE action LIKE 'webhook_endpoint.token_%' ORDER BY id",
    );
    assert.deepEqual(
      audit.map((row) => row.action),
      ['webhook_endpoint.token_revealed', 'webhook_endpoint.token_rolled'],
    );
  });

  it('resends a failed delivery from the delivery log', async () => {
    receiver.respond(() => ({ status: 500, body: 'down' }));
    const count = receiver.requests.length;
    await pay('3000');
    await ctx.tessera.webhookDispatcher.runOnce();
    await receiver.waitFor(count + 1);
    receiver.respond(() => ({ status: 200, body: 'success' }));
    await page.reload();
    await page.getByText('down').first().waitFor();
    await page
      .getByRole('button', { name: /Resend delivery/ })
      .first()
      .click();
    await ctx.tessera.webhookDispatcher.runOnce();
    await receiver.waitFor(count + 2);
  });

  it("runs the go-live check from the endpoint page and shows each case's verdict, the token hidden", async () => {
    // The endpoint's current token (the page of the previous test may have been reloaded after a roll).
    await page.getByRole('button', { name: 'Reveal token' }).click();
    const token = await page.locator('#token').innerText();
    receiver.respond((request) => {
      try {
        verifyWebhook({ headers: request.headers, rawBody: request.rawBody, token, now: ctx.clock.now() });
        return { status: 200, body: 'success' };
      } catch {
        return { status: 401, body: 'signature not verified' };
      }
    });
    await page.goto(page.url().replace(/\/reveal$/, ''));
    await page.getByRole('button', { name: 'Run go-live check' }).click();
    await page.locator('#check-result').waitFor();
    assert.equal(
      await page.locator('#check-result').innerText(),
      'Ready to go live: every case passed',
      await page.locator('section.card').innerText(),
    );
    const source = await page.content();
    assert.doesNotMatch(source, new RegExp(token));
    assert.doesNotMatch(source, /id="token"/);
    await page.screenshot({ path: `${docImages}/dashboard-endpoint-check.png`, fullPage: true });
    // The verdicts' table at both widths: no serious axe-core violation, no sideways scroll.
    const accessibility: string[] = [];
    const sideways: string[] = [];
    await auditAtBothWidths(page, 'endpoint with a go-live check', accessibility, sideways);
    assert.deepEqual(accessibility, []);
    assert.deepEqual(sideways, []);
    receiver.respond(() => ({ status: 200, body: 'success' }));
  });

  it('refunds part of a payment from its page, showing the card brand and last four digits only', async () => {
    const method = await api('/payment_methods/create', {
      type: 'card',
      card: { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    const payment = await api('/payment/create', {
      amount: '2500',
      currency: 'USD',
      confirm: true,
      paymentMethod: method.id,
    });
    await page.goto(`${base}/dashboard/payments/${payment.id}`);
    const source = await page.content();
    assert.doesNotMatch(source, /4242424242424242|424242/);
    assert.match(source, /•••• 4242/);
    // Keyboard only: the refused field gets the focus (the page's own script) and says why.
    await page.getByLabel('Amount (USD)').fill('12x');
    await page.keyboard.press('Enter');
    await page.locator('#f-amount-error').waitFor();
    assert.equal(await page.getByLabel('Amount (USD)').inputValue(), '12x');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'f-amount');
    assert.equal(await page.getByLabel('Amount (USD)').getAttribute('aria-describedby'), 'f-amount-error');
    assert.deepEqual(await seriousViolations(page), []);
    await page.getByLabel('Amount (USD)').fill('10.00');
    await page.keyboard.press('Enter');
    await page.getByText(/Refund re_\d{19} created/).waitFor();
    assert.equal(await page.locator('[role="status"] .notice').count(), 1);
    await page.screenshot({ path: `${docImages}/dashboard-payment.png`, fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    assert.equal(await scrollsSideways(page), false);
    await page.screenshot({ path: `${docImages}/dashboard-payment-390.png`, fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('shows every main page at 1280 and 390 px without a CSP violation, a card number, a serious axe-core violation or a sideways scroll', async () => {
    const customer = await api('/customers/create', {
      email: 'ada@browser.test',
      firstName: 'Ada',
      lastName: 'Lovelace',
    });
    const method = await api('/payment_methods/create', {
      type: 'card',
      card: { cardNo: '5555555555554444', expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    await api(`/payment_methods/${method.id}/attach`, { customerId: customer.id });
    const customerPayment = await api('/payment/create', {
      amount: '4200',
      currency: 'USD',
      confirm: true,
      paymentMethod: method.id,
      customerId: customer.id,
      orderNo: 'ORD-42',
    });
    const invoice = await api('/invoices/create', {
      customerId: customer.id,
      currency: 'USD',
      collectionMethod: 'send_invoice',
      lineItems: [
        { description: 'Consulting', amount: '15000', quantity: 2 },
        { description: 'Travel', amount: '4250' },
      ],
    });
    // Some history for the home page's charts: payments on earlier days, a few declined.
    const now = ctx.clock.now();
    for (let daysAgo = 1; daysAgo < 30; daysAgo += 2) {
      ctx.clock.set(new Date(now.getTime() - daysAgo * 24 * 60 * 60 * 1000));
      for (let index = 0; index < 1 + (daysAgo % 3); index += 1) {
        const card = await api('/payment_methods/create', {
          type: 'card',
          card: {
            cardNo: index === 2 ? '4000000000000002' : '4242424242424242',
            expMonth: '12',
            expYear: '2030',
            securityCode: '123',
          },
        });
        await api('/payment/create', {
          amount: String(1500 + ((daysAgo * 731 + index * 977) % 9000)),
          currency: 'USD',
          confirm: true,
          paymentMethod: card.id,
        });
      }
    }
    ctx.clock.set(now);
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
    const pages: Array<[string, string, string]> = [
      ['home', '/dashboard', 'Home'],
      ['payments', '/dashboard/payments', 'Payments'],
      ['customers', '/dashboard/customers', 'Customers'],
      ['customer', `/dashboard/customers/${customer.id}`, 'Ada Lovelace'],
      ['refunds', '/dashboard/refunds', 'Refunds'],
      ['invoices', '/dashboard/invoices', 'Invoices'],
      ['invoice', `/dashboard/invoices/${invoice.id}`, 'Draft'],
      ['webhooks', '/dashboard/developers/webhooks', 'Webhook endpoints'],
      ['events', '/dashboard/developers/events', 'Events'],
      ['request-logs', '/dashboard/developers/request-logs', 'API request logs'],
      ['api-keys', '/dashboard/developers/api-keys', 'API keys'],
      ['audit-log', '/dashboard/audit-log', 'Audit log'],
      ['two-factor', '/dashboard/account/two-factor', 'Two-factor sign-in'],
      ['payment-detail', `/dashboard/payments/${customerPayment.id}`, '42.00 USD'],
      ['team-page', '/dashboard/team', 'Team'],
      ['settings', '/dashboard/settings', 'Settings'],
    ];
    // The pages whose pictures docs/dashboard.md shows, at each width.
    const documented: Record<number, readonly string[]> = {
      1280: ['home', 'payments', 'customer', 'invoices'],
      390: ['home', 'payments', 'invoice'],
    };
    const accessibility: string[] = [];
    const sideways: string[] = [];
    const axeLoaded = await axeInEveryDocument(page);
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
      for (const [name, path, heading] of pages) {
        await page.goto(`${base}${path}`);
        await page.getByRole('heading', { name: heading }).first().waitFor();
        assert.doesNotMatch(await page.content(), /5555555555554444|4242424242424242/, name);
        for (const violation of await seriousViolations(page)) accessibility.push(`${name} at ${width}: ${violation}`);
        if (await scrollsSideways(page)) sideways.push(`${name} at ${width}`);
        const file = `${name}${width === 390 ? '-390' : ''}.png`;
        const folder = documented[width]!.includes(name) ? docImages : screenshots;
        await page.screenshot({ path: `${folder}/${folder === docImages ? 'dashboard-' : ''}${file}`, fullPage: true });
      }
    }
    await axeLoaded.dispose();
    // On a phone the side navigation is a menu, opened and closed from the keyboard.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${base}/dashboard/payments`);
    assert.equal(await page.locator('aside.side').isVisible(), false);
    assert.equal(await page.getByRole('link', { name: 'Refunds' }).isVisible(), false);
    await page.locator('details.menu summary').focus();
    await page.keyboard.press('Enter');
    await page.getByRole('link', { name: 'Refunds' }).waitFor();
    for (const violation of await seriousViolations(page)) accessibility.push(`menu open at 390: ${violation}`);
    await page.screenshot({ path: `${docImages}/dashboard-menu-390.png` });
    await page.keyboard.press('Escape');
    await page.getByRole('link', { name: 'Refunds' }).waitFor({ state: 'hidden' });
    await page.setViewportSize({ width: 1280, height: 900 });
    assert.deepEqual(violations, []);
    assert.deepEqual(accessibility, []);
    assert.deepEqual(sideways, []);
  });

  it('shows the signed-out pages (sign-in, reset, set password, sign-in link, expired link) at 1280 and 390 px without a serious axe-core violation or a sideways scroll', async () => {
    const accessibility: string[] = [];
    const sideways: string[] = [];
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const anonymous = await context.newPage();
      await anonymous.goto(`${base}/dashboard/sign-in`);
      await anonymous.getByRole('heading', { name: 'Sign in' }).waitFor();
      await auditAtBothWidths(anonymous, 'sign-in', accessibility, sideways);
      await anonymous.getByRole('link', { name: 'Forgot your password?' }).click();
      await anonymous.getByRole('heading', { name: 'Reset your password' }).waitFor();
      await auditAtBothWidths(anonymous, 'forgot-password', accessibility, sideways);
      const sent = smtp.messages.length;
      await anonymous.getByLabel('E-mail').fill('owner@browser.test');
      await anonymous.getByRole('button', { name: 'Send a reset link' }).click();
      await anonymous.getByText(/a reset link is on its way/).waitFor();
      await auditAtBothWidths(anonymous, 'forgot-password sent', accessibility, sideways);
      const mail = (await smtp.waitFor(sent + 1)).slice(sent).find((each) => each.to.includes('owner@browser.test'));
      assert.ok(mail, 'the reset mail');
      await anonymous.goto(setPasswordLink(mail.raw));
      await anonymous.getByRole('heading', { name: 'Choose a password' }).waitFor();
      await auditAtBothWidths(anonymous, 'set-password', accessibility, sideways);
      await anonymous.getByLabel('New password').fill('short');
      await anonymous.getByRole('button', { name: 'Set password and sign in' }).click();
      await anonymous.locator('#f-password-error').waitFor();
      await auditAtBothWidths(anonymous, 'set-password refused', accessibility, sideways);
      await anonymous.goto(await ctx.tessera.team.sandboxOwnerLink(merchantId, 'owner@browser.test'));
      await anonymous.getByRole('heading', { name: 'Sign in as owner@browser.test' }).waitFor();
      await auditAtBothWidths(anonymous, 'sign-in link', accessibility, sideways);
      await anonymous.goto(`${base}/dashboard/set-password?token=used-up`);
      await anonymous.getByRole('heading', { name: /This link has expired/ }).waitFor();
      await auditAtBothWidths(anonymous, 'expired link', accessibility, sideways);
    } finally {
      await context.close();
    }
    assert.deepEqual(accessibility, []);
    assert.deepEqual(sideways, []);
  });

  it('shows the ownership page, a refund, an endpoint with its token and recover answers, an event and the 3-D Secure challenge at 1280 and 390 px without a serious axe-core violation or a sideways scroll', async () => {
    const accessibility: string[] = [];
    const sideways: string[] = [];
    const endpoint = await api('/webhook_endpoints/create', { url: receiver.url('/axe'), description: 'Audited' });
    const payment = await pay('6100');
    const refund = await api('/refunds/create', { paymentId: payment.id, amount: '1100' });
    await ctx.tessera.webhookDispatcher.runOnce();
    const events = await apiGet(`/events?type=payment.succeeded&objectId=${payment.id}`);
    const event = events.data[0] as { id: string };

    const visits: Array<[string, string, string | RegExp]> = [
      ['owner', '/dashboard/team/owner', 'Ownership and security'],
      ['refund', `/dashboard/refunds/${refund.id}`, /11\.00 USD/],
      ['endpoint', `/dashboard/developers/webhooks/${endpoint.id}`, receiver.url('/axe')],
      ['event', `/dashboard/developers/events/${event.id}`, 'payment.succeeded'],
    ];
    for (const [name, path, heading] of visits) {
      await page.goto(`${base}${path}`);
      await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
      await auditAtBothWidths(page, name, accessibility, sideways);
    }
    // The endpoint page as the answers to its forms show it.
    await page.goto(`${base}/dashboard/developers/webhooks/${endpoint.id}`);
    await page.getByRole('button', { name: 'Reveal token' }).click();
    await page.locator('#token').waitFor();
    await auditAtBothWidths(page, 'endpoint token revealed', accessibility, sideways);
    await page.getByRole('button', { name: 'Roll token' }).click();
    await page.getByText('The new token').waitFor();
    await auditAtBothWidths(page, 'endpoint token rolled', accessibility, sideways);
    await page.getByRole('button', { name: 'Recover events' }).click();
    await page.locator('#recover-result').waitFor();
    await auditAtBothWidths(page, 'endpoint recover', accessibility, sideways);

    const challengeMethod = await api('/payment_methods/create', {
      type: 'card',
      card: { cardNo: '4000002500003155', expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    const challenged = await api('/payment/create', {
      amount: '1999',
      currency: 'USD',
      confirm: true,
      paymentMethod: challengeMethod.id,
      returnUrl: 'https://shop.example.com/return',
      description: 'Order 1999',
    });
    assert.equal(challenged.nextAction?.type, 'redirect', JSON.stringify(challenged));
    await page.goto(challenged.nextAction.redirectToUrl);
    await page.getByRole('heading', { name: '3-D Secure authentication' }).waitFor();
    await auditAtBothWidths(page, '3-D Secure challenge', accessibility, sideways);
    await page.goto(`${base}/dashboard`);

    assert.deepEqual(accessibility, []);
    assert.deepEqual(sideways, []);
  });

  it('has taken, in this run, every picture docs/dashboard.md shows', () => {
    assert.deepEqual(
      picturesNotTaken('docs/dashboard.md', startedMs, () => true),
      [],
    );
  });

  it('signs out: the session no longer opens a page', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.goto(`${base}/dashboard/payments`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  });
});
