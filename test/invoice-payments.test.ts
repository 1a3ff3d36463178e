import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertScriptsUnderNonce } from './helpers/page-safety.js';
import { verifyWebhook } from '../sdk/verify-webhook.js';
import { collectJobKind, retryDelaysDays } from '../src/invoices/collection.js';
import { databaseKind, injectRaw, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { mailText, startSmtpServer, type SmtpTestServer } from './helpers/smtp.js';

const cards = {
  visa: '4242424242424242',
  declined: '4000000000000002',
  threeDSecure: '4000002500003155',
  mitDeclined: '4000000000000341',
  async: '4000000000000630',
};
const dayMs = 24 * 60 * 60 * 1000;

describe('automatic collection schedule', () => {
  test('retries 1, 3 and 5 days after a failed attempt, then stops', () => {
    assert.deepEqual(retryDelaysDays, [1, 3, 5]);
    assert.equal(collectJobKind, 'invoice.collect');
  });
});

describe(`invoice payments (${databaseKind})`, () => {
  let ctx: TestContext;
  let smtp: SmtpTestServer;
  let hook: Receiver;
  let merchant: TestMerchant;
  let endpointToken: string;

  before(async () => {
    smtp = await startSmtpServer();
    hook = await startReceiver();
    ctx = await startTestApp({ env: { TESSERA_SMTP_URL: smtp.url } });
    merchant = await ctx.merchant({ name: 'Acme Ltd' });
    const endpoint = await merchant.call('POST', '/webhook_endpoints/create', {
      url: hook.url(),
      legacyNotifications: true,
    });
    assert.equal(endpoint.status, 200, endpoint.raw);
    endpointToken = endpoint.body.data.token;
  });
  after(async () => {
    await ctx.close();
    await smtp.close();
    await hook.close();
  });

  /** Each step a millisecond later than the one before, so that events list in the order they happened. */
  async function call(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown) {
    ctx.clock.advance(1);
    return merchant.call(method, path, body);
  }

  async function customer(email = 'ada@example.com'): Promise<string> {
    return (await call('POST', '/customers/create', { firstName: 'Ada', email })).body.data.id;
  }

  /** A card bound to the customer by a successful storing payment (docs/api.md#tokenization-rules), as a MIT needs. */
  async function boundCard(customerId: string, cardNo = cards.visa): Promise<string> {
    const method = await call('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo, expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    const storing = await call('POST', '/payment/create', {
      amount: '0',
      currency: 'USD',
      customerId,
      paymentMethod: method.body.data.id,
      setupFutureUsage: 'on',
      confirm: true,
    });
    assert.equal(storing.body.data.status, 'succeeded', storing.raw);
    return method.body.data.id;
  }

  async function invoice(customerId: string, collectionMethod: string, extra: Record<string, unknown> = {}) {
    const created = await call('POST', '/invoices/create', {
      customerId,
      currency: 'USD',
      lineItems: [
        { description: 'Plan, monthly', amount: '2500', quantity: 2 },
        { description: 'Setup', amount: '1000' },
      ],
      collectionMethod,
      ...extra,
    });
    assert.equal(created.status, 200, created.raw);
    const finalized = await call('POST', `/invoices/${created.body.data.id}/finalize`);
    assert.equal(finalized.status, 200, finalized.raw);
    return finalized.body.data;
  }

  /** Runs the jobs due a millisecond later, so that their events follow those before them. */
  async function runJobs(): Promise<number> {
    ctx.clock.advance(1);
    return ctx.runJobs();
  }

  const get = async (id: string) => (await call('GET', `/invoices/${id}`)).body.data;
  const eventTypes = async (id: string) =>
    ((await call('GET', `/events?objectId=${id}&limit=100`)).body.data.data as Array<{ type: string }>)
      .map((event) => event.type)
      .reverse();

  /** GET of a page address as a browser would (path and query of an absolute URL). */
  async function browse(url: string) {
    const target = new URL(url);
    return injectRaw(ctx, { method: 'GET', url: `${target.pathname}${target.search}` });
  }

  async function postForm(path: string, fields: Record<string, string>) {
    ctx.clock.advance(1);
    return injectRaw(ctx, {
      method: 'POST',
      url: path,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(fields).toString(),
    });
  }

  type Card = { cardNo: string; expiry?: string; securityCode?: string };

  /** The card form of a hosted invoice page: where it posts, and its token. */
  async function formOn(url: string): Promise<{ action: string; token: string }> {
    const page = await browse(url);
    assert.equal(page.statusCode, 200);
    const action = /<form method="post" action="([^"]+)"/.exec(page.body)?.[1];
    const token = /name="token" value="([^"]+)"/.exec(page.body)?.[1];
    assert.ok(action && token, page.body);
    return { action, token };
  }

  /** Fills in the card form of a hosted invoice page as a person would and posts it. */
  async function payOnPage(url: string, card: Card) {
    return postCard(await formOn(url), card);
  }

  async function postCard({ action, token }: { action: string; token: string }, card: Card) {
    return postForm(action, {
      token,
      cardNo: card.cardNo.replace(/(\d{4})/g, '$1 ').trim(),
      expiry: card.expiry ?? '12/30',
      securityCode: card.securityCode ?? '123',
      name: 'Ada Lovelace',
    });
  }

  test('charge_automatically: finalization collects at once as a MIT on the bound card, and the invoice is paid', async () => {
    const customerId = await customer();
    const card = await boundCard(customerId);
    const open = await invoice(customerId, 'charge_automatically');
    assert.equal(open.status, 'open');
    assert.equal(open.nextPaymentAttempt, open.finalizedAt);
    assert.equal(await runJobs(), 1);

    const paid = await get(open.id);
    assert.equal(paid.status, 'paid');
    assert.equal(paid.amountPaid, '6000');
    assert.equal(paid.amountRemaining, '0');
    assert.equal(paid.attemptCount, 1);
    assert.equal(paid.nextPaymentAttempt, null);
    assert.ok(paid.paidAt);
    const payment = (await call('GET', `/payment/${paid.paymentId}`)).body.data;
    assert.equal(payment.invoiceId, open.id);
    assert.equal(payment.amount, '6000');
    assert.equal(payment.subsequentInitialType, 'mit');
    assert.equal(payment.paymentMethod, card);
    assert.equal(payment.status, 'succeeded');
    assert.deepEqual(await eventTypes(open.id), ['invoice.created', 'Invoice.updated', 'invoice.payment_succeeds']);
    const [succeeds] = (await call('GET', `/events?objectId=${open.id}&type=invoice.payment_succeeds`)).body.data.data;
    assert.deepEqual(succeeds.data, paid);

    const again = await call('POST', `/invoices/${open.id}/pay`);
    assert.equal(again.status, 400, 'a second pay of a paid invoice is refused');
    assert.equal(again.body.code, 'invalid_state');
    assert.equal(again.body.data.status, 'paid');
    assert.equal((await call('POST', `/invoices/${open.id}/void`)).body.code, 'invalid_state');
  });

  test('a failed automatic charge is retried 1, 3 and 5 days later by the injected clock; after the fourth the invoice stays open', async () => {
    const customerId = await customer();
    await boundCard(customerId, cards.mitDeclined);
    const open = await invoice(customerId, 'charge_automatically');
    const start = ctx.clock.now().getTime();
    await runJobs();
    let current = await get(open.id);
    assert.equal(current.status, 'open');
    assert.equal(current.attemptCount, 1);
    assert.equal(current.lastPaymentError.code, 'card_declined');
    const failedPayment = (await call('GET', `/payment/${current.paymentId}`)).body.data;
    assert.equal(failedPayment.status, 'failed');
    assert.equal(failedPayment.invoiceId, open.id);

    let failedAt = Date.parse(current.nextPaymentAttempt) - dayMs;
    for (const [index, days] of [1, 3, 5].entries()) {
      assert.equal(
        current.nextPaymentAttempt,
        new Date(failedAt + days * dayMs).toISOString(),
        `retry ${index + 1} due`,
      );
      ctx.clock.set(new Date(Date.parse(current.nextPaymentAttempt) - 1));
      await ctx.runJobs();
      assert.equal((await get(open.id)).attemptCount, index + 1, 'nothing runs before the retry is due');
      ctx.clock.set(new Date(Date.parse(current.nextPaymentAttempt)));
      failedAt = ctx.clock.now().getTime();
      await ctx.runJobs();
      current = await get(open.id);
      assert.equal(current.attemptCount, index + 2);
    }
    assert.equal(current.status, 'open', 'after the last retry the invoice stays open');
    assert.equal(current.nextPaymentAttempt, null);
    ctx.clock.advance(30 * dayMs);
    await runJobs();
    assert.equal((await get(open.id)).attemptCount, 4);
    assert.ok(ctx.clock.now().getTime() - start > 9 * dayMs);
    const types = await eventTypes(open.id);
    assert.deepEqual(types.slice(2), Array(4).fill('invoice.payment_failed'));
  });

  test('a retry succeeds once the customer has a card: the failed attempt first, then paid', async () => {
    const customerId = await customer();
    const open = await invoice(customerId, 'charge_automatically');
    await runJobs();
    const failed = await get(open.id);
    assert.equal(failed.status, 'open');
    assert.equal(failed.paymentId, null);
    assert.equal(failed.lastPaymentError.code, 'payment_method_unavailable');
    await boundCard(customerId);
    ctx.clock.set(new Date(Date.parse(failed.nextPaymentAttempt)));
    await runJobs();
    const paid = await get(open.id);
    assert.equal(paid.status, 'paid');
    assert.equal(paid.attemptCount, 2);
    assert.equal(paid.lastPaymentError, null);
    assert.deepEqual(await eventTypes(open.id), [
      'invoice.created',
      'Invoice.updated',
      'invoice.payment_failed',
      'invoice.payment_succeeds',
    ]);
  });

  test('pay: a declined MIT leaves the invoice open with invoice.payment_failed; a good card then pays it', async () => {
    const customerId = await customer();
    const declining = await boundCard(customerId, cards.mitDeclined);
    const open = await invoice(customerId, 'send_invoice', { paymentMethod: declining });
    const declined = await call('POST', `/invoices/${open.id}/pay`);
    assert.equal(declined.status, 200, declined.raw);
    assert.equal(declined.body.data.status, 'open');
    assert.equal(declined.body.data.lastPaymentError.code, 'card_declined');
    assert.equal(declined.body.data.nextPaymentAttempt, null, 'send_invoice is never retried automatically');

    const good = await boundCard(customerId);
    const stranger = await boundCard(await customer('eve@example.com'));
    const refused = await call('POST', `/invoices/${open.id}/pay`, { paymentMethod: stranger });
    assert.equal(refused.body.code, 'payment_method_bound_elsewhere');
    const paid = await call('POST', `/invoices/${open.id}/pay`, { paymentMethod: good });
    assert.equal(paid.body.data.status, 'paid', paid.raw);
    assert.equal(paid.body.data.amountPaid, '6000');
    assert.deepEqual(await eventTypes(open.id), [
      'invoice.created',
      'Invoice.updated',
      'invoice.payment_failed',
      'invoice.payment_succeeds',
    ]);
  });

  test('two pays at once charge the card once', async () => {
    const customerId = await customer();
    await boundCard(customerId);
    const open = await invoice(customerId, 'send_invoice');
    const answers = await Promise.all([1, 2, 3].map(() => merchant.call('POST', `/invoices/${open.id}/pay`)));
    assert.equal(answers.filter((answer) => answer.status === 200).length, 1, answers.map((a) => a.raw).join('\n'));
    for (const answer of answers.filter((candidate) => candidate.status !== 200)) {
      assert.equal(answer.body.code, 'invalid_state');
    }
    const payments = (await call('GET', `/payment?customerId=${customerId}&limit=100`)).body.data.data as Array<{
      invoiceId: string | null;
    }>;
    assert.equal(payments.filter((payment) => payment.invoiceId === open.id).length, 1);
    assert.equal((await get(open.id)).status, 'paid');
  });

  test('send_invoice: the e-mailed link opens the hosted page, whose card form pays the invoice once', async () => {
    const customerId = await customer('grace@example.com');
    const open = await invoice(customerId, 'send_invoice', { daysUntilDue: 10 });
    const before = smtp.messages.length;
    assert.equal((await call('POST', `/invoices/${open.id}/send`)).status, 200);
    const [mail] = (await smtp.waitFor(before + 1)).slice(before);
    assert.deepEqual(mail!.to, ['grace@example.com']);
    const link = /https?:\/\/\S+\/invoice\/in_\d{19}\?token=[0-9a-f]+/.exec(mailText(mail!.raw))?.[0];
    assert.equal(link, open.hostedInvoiceUrl);

    const posted = await payOnPage(link!, { cardNo: cards.visa });
    assert.equal(posted.statusCode, 303);
    assert.equal(posted.headers.location, open.hostedInvoiceUrl);
    const paidPage = await browse(open.hostedInvoiceUrl);
    assert.match(paidPage.body, /This invoice has been paid/);
    assert.doesNotMatch(paidPage.body, /<form/);
    for (const page of [posted.body, paidPage.body])
      assert.ok(!page.includes(cards.visa) && !page.includes('4242 4242'));

    const paid = await get(open.id);
    assert.equal(paid.status, 'paid');
    const payment = (await call('GET', `/payment/${paid.paymentId}`)).body.data;
    assert.equal(payment.invoiceId, open.id);
    assert.equal(payment.subsequentInitialType, null, 'a one-off payment by the cardholder');
    assert.equal(payment.amount, '6000');

    // The same form posted again (a second click, a reload) charges nothing.
    const token = new URL(open.hostedInvoiceUrl).searchParams.get('token')!;
    const twice = await postForm(`/invoice/${open.id}/pay`, {
      token,
      cardNo: cards.visa,
      expiry: '12/30',
      securityCode: '123',
      name: 'Ada Lovelace',
    });
    assert.equal(twice.statusCode, 303);
    const payments = (await call('GET', `/payment?customerId=${customerId}`)).body.data.data;
    assert.equal(payments.length, 1);
    assert.deepEqual(await eventTypes(open.id), [
      'invoice.created',
      'Invoice.updated',
      'Invoice.sent',
      'invoice.payment_succeeds',
    ]);
  });

  test('the challenge card goes through the 3-D Secure page and back to the invoice, paid', async () => {
    const open = await invoice(await customer(), 'send_invoice');
    const posted = await payOnPage(open.hostedInvoiceUrl, { cardNo: cards.threeDSecure });
    assert.equal(posted.statusCode, 303);
    const challengeUrl = String(posted.headers.location);
    assert.match(challengeUrl, /\/3ds\/pt_\d{19}\?secret=/);
    const challenge = await browse(challengeUrl);
    assert.equal(challenge.statusCode, 200);
    const action = /<form method="post" action="([^"]+)"/.exec(challenge.body)![1]!;
    const secret = /name="secret" value="([^"]+)"/.exec(challenge.body)![1]!;
    assert.equal((await get(open.id)).status, 'open', 'not paid before authentication');
    const pageWhileWaiting = await browse(open.hostedInvoiceUrl);
    assert.match(pageWhileWaiting.body, /<form method="post"/, 'the customer may start again meanwhile');

    const passed = await postForm(action, { secret: secret.replace(/&#95;/g, '_'), outcome: 'pass' });
    assert.equal(passed.statusCode, 303);
    const back = new URL(String(passed.headers.location));
    assert.equal(back.pathname, `/invoice/${open.id}`);
    assert.match(back.search, /payment_id=pt_\d{19}/);
    const page = await browse(back.toString());
    assert.match(page.body, /This invoice has been paid/);
    const paid = await get(open.id);
    assert.equal(paid.status, 'paid');
    assert.equal((await call('GET', `/payment/${paid.paymentId}`)).body.data.use3D, true);
  });

  test('an unanswered 3-D Secure page gives way to a new card; the old payment is canceled', async () => {
    const open = await invoice(await customer(), 'send_invoice');
    const first = await payOnPage(open.hostedInvoiceUrl, { cardNo: cards.threeDSecure });
    const abandoned = /\/3ds\/(pt_\d{19})/.exec(String(first.headers.location))![1]!;
    const second = await payOnPage(open.hostedInvoiceUrl, { cardNo: cards.visa });
    assert.equal(second.statusCode, 303);
    assert.equal((await get(open.id)).status, 'paid');
    const old = (await call('GET', `/payment/${abandoned}`)).body.data;
    assert.equal(old.status, 'canceled');
    assert.equal(old.cancellationReason, 'abandoned');
  });

  test('the page shows a decline and keeps the invoice open; bad fields are named beside them, the number never shown', async () => {
    const open = await invoice(await customer(), 'send_invoice');
    const declined = await payOnPage(open.hostedInvoiceUrl, { cardNo: cards.declined });
    assert.equal(declined.statusCode, 303);
    const page = await browse(open.hostedInvoiceUrl);
    assert.match(page.body, /The last payment did not go through/);
    assert.ok(!page.body.includes(cards.declined));
    const invoiceNow = await get(open.id);
    assert.equal(invoiceNow.status, 'open');
    assert.equal(invoiceNow.lastPaymentError.code, 'card_declined');
    assert.equal(invoiceNow.nextPaymentAttempt, null);

    const badLuhn = '4242424242424241';
    const refused = await payOnPage(open.hostedInvoiceUrl, { cardNo: badLuhn, expiry: '13/30', securityCode: '98765' });
    assert.equal(refused.statusCode, 400);
    assert.match(refused.body, /id="expiry-error"/);
    assert.match(refused.body, /id="securityCode-error"/);
    assert.match(refused.body, /value="13\/30"/, 'the expiry typed is kept');
    for (const secret of [badLuhn, '4242 4242 4242 4241', '98765']) assert.ok(!refused.body.includes(secret), secret);
    const luhn = await payOnPage(open.hostedInvoiceUrl, { cardNo: badLuhn });
    assert.equal(luhn.statusCode, 400);
    assert.match(luhn.body, /id="cardNo-error"/);
    assert.ok(!luhn.body.includes(badLuhn) && !luhn.body.includes('4242 4242 4242 4241'));
    assert.match(String(luhn.headers['content-security-policy']), /form-action 'self'/);
    assert.deepEqual(assertScriptsUnderNonce(luhn.headers, luhn.body), [
      '/js/v1/card-input.js',
      '/js/v1/hosted-form.js',
    ]);
  });

  test('two posts of the card form at once make one payment', async () => {
    const customerId = await customer();
    const open = await invoice(customerId, 'send_invoice');
    // Three pages opened before any is posted (opened after a payment, a page shows no form).
    const forms = await Promise.all([1, 2, 3].map(() => formOn(open.hostedInvoiceUrl)));
    const answers = await Promise.all(forms.map((form) => postCard(form, { cardNo: cards.visa })));
    for (const answer of answers) assert.equal(answer.statusCode, 303);
    const payments = (await call('GET', `/payment?customerId=${customerId}`)).body.data.data;
    assert.equal(payments.length, 1);
    assert.equal((await get(open.id)).status, 'paid');
  });

  test('void is refused while a payment is being processed; the asynchronous card then pays the invoice', async () => {
    const open = await invoice(await customer(), 'send_invoice');
    const posted = await payOnPage(open.hostedInvoiceUrl, { cardNo: cards.async });
    assert.equal(posted.statusCode, 303);
    assert.match((await browse(open.hostedInvoiceUrl)).body, /being processed/);
    const voided = await call('POST', `/invoices/${open.id}/void`);
    assert.equal(voided.status, 400);
    assert.equal(voided.body.code, 'invalid_state');
    assert.match(voided.body.data.paymentId, /^pt_\d{19}$/);
    assert.equal((await call('POST', `/invoices/${open.id}/pay`)).body.code, 'invalid_state');
    ctx.clock.advance(5000);
    await runJobs();
    const paid = await get(open.id);
    assert.equal(paid.status, 'paid');
    assert.equal(paid.paymentId, voided.body.data.paymentId);
  });

  test('an uncollectible invoice can still be paid; a void one cannot', async () => {
    const customerId = await customer();
    await boundCard(customerId);
    const marked = await invoice(customerId, 'send_invoice');
    await call('POST', `/invoices/${marked.id}/mark_uncollectible`);
    assert.equal((await call('POST', `/invoices/${marked.id}/pay`)).body.data.status, 'paid');
    const voided = await invoice(customerId, 'send_invoice');
    await call('POST', `/invoices/${voided.id}/void`);
    const refused = await call('POST', `/invoices/${voided.id}/pay`);
    assert.equal(refused.body.code, 'invalid_state');
    const page = await payOnPage(voided.hostedInvoiceUrl, { cardNo: cards.visa }).catch(() => null);
    assert.equal(page, null, 'a void invoice shows no card form');
    assert.match((await browse(voided.hostedInvoiceUrl)).body, /voided/);
  });

  test('every invoice event is delivered to the endpoint in both kinds, verifiable with its token', async () => {
    const customerId = await customer();
    const draft = await call('POST', '/invoices/create', {
      customerId,
      currency: 'USD',
      lineItems: [{ description: 'x', amount: '100' }],
      collectionMethod: 'send_invoice',
    });
    await call('DELETE', `/invoices/${draft.body.data.id}`);
    const voided = await invoice(customerId, 'send_invoice');
    await call('POST', `/invoices/${voided.id}/send`);
    await call('POST', `/invoices/${voided.id}/void`);
    await ctx.tessera.webhookDispatcher.runOnce();

    const received = hook.requests.map((request) => ({ request, body: JSON.parse(request.body) }));
    const now = ctx.clock.now();
    for (const type of [
      'invoice.created',
      'invoice.deleted',
      'invoice.payment_succeeds',
      'invoice.payment_failed',
      'Invoice.sent',
      'Invoice.updated',
      'Invoice.voided',
    ]) {
      const [group, action] = type.split('.');
      const legacy = received.find(({ body }) => body.type === type);
      const endpoint = received.find(({ body }) => body.type === `endpoint_${group}.${group}_${action}`);
      assert.ok(legacy && endpoint, `${type} delivered in both kinds`);
      assert.match(endpoint.body.data.id, /^in_\d{19}$/);
      const verified = verifyWebhook({
        headers: endpoint.request.headers,
        rawBody: endpoint.request.rawBody,
        token: endpointToken,
        now,
        toleranceSeconds: 365 * 24 * 3600,
      });
      assert.equal(verified.type, `endpoint_${group}.${group}_${action}`);
    }
  });
});
