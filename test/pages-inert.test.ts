/**
 * docs/decisions/0047-one-html-kit.md: every value a merchant or a shopper gives that a page or an
 * e-mail shows is inert there. Markup and `javascript:` URLs go in through the public interface
 * (the API, the operator API, the dashboard's forms, the card frame's address), and every page
 * that shows them — the hosted checkout, the hosted invoice, the 3-D Secure page, the card frame,
 * the dashboard's pages — and the invoice e-mail must hold no tag, attribute or URL made of them.
 * Every page's scripts run under its nonce only, which its Content-Security-Policy names.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { databaseKind, injectRaw, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';
import { signedInOwner, type DashboardClient } from './helpers/dashboard.js';
import { assertInert, assertScriptsUnderNonce } from './helpers/page-safety.js';
import { mailText } from './helpers/smtp.js';

/** Markup that would run if it were written into a page as it is. */
const markup = `<script>alert(1)</script>"><img src=x onerror=alert(2)>'><svg onload=alert(3)>`;
const scriptUrl = 'javascript:alert(4)';

type Headers = Record<string, string | string[] | number | undefined>;

/** Nothing of `markup` survives as markup: no tag, no attribute, no javascript: URL. */
function assertShownInert(what: string, body: string): void {
  assert.ok(!body.includes('<script>alert'), `${what}: no script tag made of a value`);
  assert.ok(!/<img src=x/i.test(body) && !/<svg onload/i.test(body), `${what}: no element made of a value`);
  assertInert(body);
}

function assertPage(what: string, answer: { headers: Headers; body: string }, shows?: string): void {
  assertShownInert(what, answer.body);
  assertScriptsUnderNonce(answer.headers, answer.body);
  if (shows !== undefined) assert.ok(answer.body.includes(shows), `${what} shows the value, escaped`);
}

describe(`every page and e-mail keeps merchant and shopper values inert (${databaseKind})`, () => {
  let ctx: TestContext;
  let shop: TestMerchant;
  let owner: DashboardClient;
  const escapedName = '&lt;script&gt;alert(1)&lt;/script&gt;';

  before(async () => {
    ctx = await startTestApp();
    shop = await ctx.merchant({ name: `Shop ${markup}`.slice(0, 200) });
    owner = await signedInOwner(ctx, shop.id, 'owner@inert.test', 'a long enough password 1');
  });
  after(async () => ctx?.close());

  const browse = (url: string, headers: Record<string, string> = {}) =>
    injectRaw(ctx, {
      method: 'GET',
      url: url.startsWith('/') ? url : new URL(url).pathname + new URL(url).search,
      headers,
    });

  test('a javascript: logo is refused, and a return or cancel address that is no http(s) URL too', async () => {
    const logo = await ctx.tessera.server.inject({
      method: 'POST',
      url: `/admin/v1/merchants/${shop.id}/update`,
      headers: { authorization: `Bearer ${ctx.operatorKey}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ logoUrl: scriptUrl }),
    });
    assert.equal(logo.statusCode, 400, logo.body);
    for (const field of ['returnUrl', 'cancelUrl']) {
      const refused = await shop.call('POST', '/checkout/session/create', {
        amountTotal: '990',
        currency: 'EUR',
        returnUrl: 'https://shop.example/done',
        [field]: scriptUrl,
      });
      assert.equal(refused.status, 400, `${field}: ${refused.raw}`);
    }
  });

  test('the hosted checkout: merchant name, line items and addresses', async () => {
    const created = await shop.call('POST', '/checkout/session/create', {
      amountTotal: '990',
      currency: 'EUR',
      returnUrl: `https://shop.example/done?next=${encodeURIComponent(markup)}`,
      cancelUrl: `https://shop.example/cancel?x="><script>alert(5)</script>`,
      lineItems: [
        { name: markup, description: markup, amount: 9.9, quantity: 1 },
        { description: `${scriptUrl} ${markup}`, amount: 0, quantity: 1 },
      ],
    });
    assert.equal(created.status, 200, created.raw);
    const page = await browse(created.body.data.url);
    assert.equal(page.statusCode, 200);
    assertPage('checkout page', page, escapedName);
    // A refused form shows the name typed again: inert too.
    const refused = await injectRaw(ctx, {
      method: 'POST',
      url: `${new URL(created.body.data.url).pathname}/pay`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ cardNo: '1', expiry: markup, securityCode: '1', name: markup }).toString(),
    });
    assert.equal(refused.statusCode, 400);
    assertPage('refused checkout form', refused);
  });

  test('the 3-D Secure page: description and return address', async () => {
    const method = await shop.call('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo: '4000002500003155', expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    assert.equal(method.status, 200, method.raw);
    const payment = await shop.call('POST', '/payment/create', {
      amount: '1000',
      currency: 'USD',
      confirm: 'true',
      paymentMethod: method.body.data.id,
      description: markup,
      returnUrl: `https://shop.example/back?x=${encodeURIComponent(markup)}`,
    });
    assert.equal(payment.status, 200, payment.raw);
    assert.equal(payment.body.data.status, 'requires_action');
    const page = await browse(payment.body.data.nextAction.redirectToUrl);
    assert.equal(page.statusCode, 200);
    assertPage('3-D Secure page', page, escapedName);
  });

  test('the hosted invoice page and the invoice e-mail: customer, lines, description', async () => {
    const customer = await shop.call('POST', '/customers/create', {
      firstName: markup,
      lastName: markup,
      email: 'shopper@inert.test',
      description: markup,
      address: { line1: markup, line2: scriptUrl, city: markup.slice(0, 100), postalCode: '"><b>' },
    });
    assert.equal(customer.status, 200, customer.raw);
    const invoice = await shop.call('POST', '/invoices/create', {
      customerId: customer.body.data.id,
      currency: 'usd',
      description: markup,
      lineItems: [{ description: markup, amount: '1250', quantity: 2 }],
      collectionMethod: 'send_invoice',
      daysUntilDue: 14,
    });
    assert.equal(invoice.status, 200, invoice.raw);
    const id = invoice.body.data.id as string;
    assert.equal((await shop.call('POST', `/invoices/${id}/finalize`)).status, 200);
    const sent = await shop.call('POST', `/invoices/${id}/send`);
    assert.equal(sent.status, 200, sent.raw);
    const opened = await shop.call('GET', `/invoices/${id}`);
    const page = await browse(opened.body.data.hostedInvoiceUrl);
    assert.equal(page.statusCode, 200);
    assertPage('hosted invoice page', page, escapedName);

    const mail = [...ctx.tessera.mail.kept()].reverse().find((message) => message.to === 'shopper@inert.test');
    assert.ok(mail, 'the invoice was e-mailed');
    const html = mailText(mail.raw, 'text/html');
    assert.match(html, /<a href="https?:\/\/[^"]+\/invoice\//);
    assertShownInert('invoice e-mail', html);
    assert.ok(html.includes(escapedName), 'the e-mail shows the values, escaped');
    assert.doesNotMatch(mail.subject, /[\r\n]/);

    // The dashboard's pages of the same customer and invoice.
    for (const path of [
      `/dashboard/customers/${customer.body.data.id}`,
      '/dashboard/customers',
      `/dashboard/invoices/${id}`,
      '/dashboard/invoices',
    ]) {
      const answer = await owner.get(path);
      assert.equal(answer.status, 200, path);
      assertPage(path, answer, escapedName);
    }
  });

  test("the dashboard: payments, webhook URLs, team members' names, settings", async () => {
    const payment = await shop.call('POST', '/payment/create', {
      amount: '500',
      currency: 'USD',
      description: markup,
      orderNo: markup.slice(0, 60),
    });
    assert.equal(payment.status, 200, payment.raw);
    const endpoint = await shop.call('POST', '/webhook_endpoints/create', {
      url: `https://hooks.example/in?x="><script>alert(6)</script>`,
      enabledEvents: ['payment.succeeded'],
      description: markup,
    });
    assert.equal(endpoint.status, 200, endpoint.raw);
    const refusedUrl = await shop.call('POST', '/webhook_endpoints/create', {
      url: scriptUrl,
      enabledEvents: ['payment.succeeded'],
    });
    assert.equal(refusedUrl.status, 400, refusedUrl.raw);
    const invited = await owner.post('/dashboard/team/invite', {
      email: 'member@inert.test',
      name: markup,
      role: 'developer',
    });
    assert.equal(invited.status, 200, invited.body);

    for (const path of [
      '/dashboard',
      '/dashboard/payments',
      `/dashboard/payments/${payment.body.data.id}`,
      `/dashboard/payments?query=${encodeURIComponent(markup)}`,
      '/dashboard/developers/webhooks',
      `/dashboard/developers/webhooks/${endpoint.body.data.id}`,
      '/dashboard/team',
      '/dashboard/settings',
      '/dashboard/developers/events',
      '/dashboard/audit-log',
    ]) {
      const answer = await owner.get(path);
      assert.equal(answer.status, 200, path);
      assertPage(path, answer);
    }
    assert.ok((await owner.get('/dashboard/team')).body.includes(escapedName), 'the member name, escaped');
  });

  test("the card frame: the page's origin and the frame's id from its address", async () => {
    const page = await browse(
      `/js/v1/card-frame?${new URLSearchParams({ key: shop.publicKey, origin: `http://127.0.0.1:8080`, id: markup })}`,
    );
    assertShownInert('card frame', page.body);
    if (page.statusCode === 200) assertScriptsUnderNonce(page.headers, page.body);
    const refused = await browse(
      `/js/v1/card-frame?${new URLSearchParams({ key: markup, origin: scriptUrl, id: markup })}`,
    );
    assert.notEqual(refused.statusCode, 200);
    assertPage('refused card frame', refused);
  });

  test('the API reference runs its scripts under its nonce only', async () => {
    const page = await browse('/docs');
    assert.equal(page.statusCode, 200);
    assert.deepEqual(assertScriptsUnderNonce(page.headers, page.body), [
      '/docs/labels.js',
      '/docs/redoc.standalone.js',
    ]);
    assertInert(page.body);
  });
});
