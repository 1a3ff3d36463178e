/**
 * docs/dashboard.md#pages on the lists beyond payments, at the HTTP level: refunds and invoices with people,
 * status tabs with counts, quick date ranges and amount filters in major units; the invoice
 * draft in major units; webhook delivery statuses as badges; and cells labelled by their own
 * column (the 390 px layout shows each cell under its header's name).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';
import { signedInOwner, type DashboardClient } from './helpers/dashboard.js';

const password = 'correct horse battery';
const dayMs = 24 * 60 * 60 * 1000;

/** Each `<td data-label="…">` of `row` as [label, text without tags]. */
function labelledCells(row: string): Array<[string, string]> {
  return [...row.matchAll(/<td data-label="([^"]*)"[^>]*>([\s\S]*?)<\/td>/g)].map((match) => [
    match[1]!,
    match[2]!
      .replace(/<[^>]*>/g, ' ')
      .replace(/\s+/g, ' ')
      .trim(),
  ]);
}

describe('dashboard: lists as staff read them (docs/dashboard.md#pages)', () => {
  let ctx: TestContext;
  let merchant: TestMerchant;
  let owner: DashboardClient;
  let customerId = '';
  let paidId = '';
  let endpointId = '';
  let bobId = '';

  const card = async (cardNo: string) => {
    const created = await merchant.call('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo, expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    assert.equal(created.status, 200, created.raw);
    return created.body.data.id as string;
  };
  const pay = async (amount: string, extra: Record<string, unknown> = {}, cardNo = '4242424242424242') => {
    const paid = await merchant.call('POST', '/payment/create', {
      amount,
      currency: 'USD',
      confirm: true,
      paymentMethod: await card(cardNo),
      ...extra,
    });
    assert.equal(paid.status, 200, paid.raw);
    return paid.body.data.id as string;
  };

  const refund = async (paymentId: string, amount: string) => {
    const refunded = await merchant.call('POST', '/refunds/create', { paymentId, amount });
    assert.equal(refunded.status, 200, refunded.raw);
    return refunded.body.data.id as string;
  };

  const invoice = async (customer: string, currency: string, amount: string) => {
    const created = await merchant.call('POST', '/invoices/create', {
      customerId: customer,
      currency,
      collectionMethod: 'send_invoice',
      lineItems: [{ description: 'Cake', amount }],
    });
    assert.equal(created.status, 200, created.raw);
    return created.body.data.id as string;
  };

  before(async () => {
    ctx = await startTestApp();
    merchant = await ctx.merchant({ name: 'Lists shop' });
    owner = await signedInOwner(ctx, merchant.id, 'owner@lists.test', password);
    const endpoint = await merchant.call('POST', '/webhook_endpoints/create', { url: 'http://127.0.0.1:9/hook' });
    assert.equal(endpoint.status, 200, endpoint.raw);
    endpointId = endpoint.body.data.id;
    const customer = await merchant.call('POST', '/customers/create', {
      email: 'ada@lists.test',
      firstName: 'Ada',
      lastName: 'Lovelace',
    });
    assert.equal(customer.status, 200, customer.raw);
    customerId = customer.body.data.id;
    // A refund ten days ago (of a payment without customer), left pending; two today of Ada's
    // payment, by a card whose refunds succeed at once.
    const now = ctx.clock.now();
    ctx.clock.set(new Date(now.getTime() - 10 * dayMs));
    await refund(await pay('5000'), '5000');
    ctx.clock.set(now);
    paidId = await pay('123456', { customerId }, '4000000000007726');
    await refund(paidId, '1050');
    await refund(paidId, '20000');
    // Invoices: one of Bob (e-mail only) in JPY ten days ago, a draft and an open one of Ada today.
    const bob = await merchant.call('POST', '/customers/create', { email: 'bob@lists.test' });
    assert.equal(bob.status, 200, bob.raw);
    bobId = bob.body.data.id;
    ctx.clock.set(new Date(now.getTime() - 10 * dayMs));
    await invoice(bobId, 'JPY', '3000');
    ctx.clock.set(now);
    await invoice(customerId, 'USD', '2500');
    const open = await invoice(customerId, 'USD', '12000');
    assert.equal((await merchant.call('POST', `/invoices/${open}/finalize`)).status, 200);
    await ctx.tessera.webhookDispatcher.runOnce();
  });
  after(() => ctx?.close());

  it("labels each cell of a customer's payments with its own column", async () => {
    const page = await owner.get(`/dashboard/customers/${customerId}`);
    assert.equal(page.status, 200);
    const section = page.body.slice(page.body.indexOf('<h2>Payments</h2>'));
    const row = section.slice(section.indexOf('<tr>', section.indexOf('<tbody')));
    const cells = labelledCells(row.slice(0, row.indexOf('</tr>')));
    assert.deepEqual(cells, [
      ['Amount', '1234.56 USD'],
      ['Status', 'Partially refunded'],
      ['Payment', paidId],
      ['Created', cells[3]![1]],
    ]);
  });

  it('shows webhook delivery statuses as the labelled badges of the other lists', async () => {
    const log = await owner.get(`/dashboard/developers/webhooks/${endpointId}`);
    assert.equal(log.status, 200);
    assert.match(log.body, /<span class="badge badge-warn">Retrying<\/span>/);
    assert.doesNotMatch(log.body, /class="status-pending"/);
    const events = await merchant.call('GET', '/events?limit=10');
    const succeeded = events.body.data.data.find((event: { type: string }) => event.type === 'payment.succeeded');
    const event = await owner.get(`/dashboard/developers/events/${succeeded.id}`);
    assert.equal(event.status, 200);
    assert.match(event.body, /<td data-label="Status"[^>]*>\s*<span class="badge badge-warn">Retrying<\/span>/);
  });

  it('lists refunds with who was refunded, amounts in major units, status tabs with counts and quick date ranges', async () => {
    const list = await owner.get('/dashboard/refunds');
    assert.equal(list.status, 200);
    assert.match(list.body, /<th scope="col">Customer<\/th>/);
    const rows = list.body.split('<tr>').slice(2);
    assert.equal(rows.length, 3);
    const ada = rows.filter((row) => row.includes('Ada Lovelace <span class="muted">ada@lists.test</span>'));
    assert.equal(ada.length, 2);
    assert.match(list.body, /<td data-label="Amount"[^>]*>\s*200\.00 <span class="currency">USD<\/span>/);
    assert.match(list.body, /<td data-label="Customer">\s*<span class="person">Ada Lovelace/);
    assert.match(list.body, /<span class="badge badge-good">Succeeded<\/span>/);
    assert.match(list.body, /aria-label="Refunds by status"/);
    assert.match(list.body, /href="\/dashboard\/refunds"\s+aria-current="page"\s*>All <span class="count">3<\/span>/);
    assert.match(list.body, /href="\/dashboard\/refunds\?status=succeeded"\s*>Succeeded <span class="count">2<\/span>/);
    assert.match(list.body, />Pending <span class="count">1<\/span>/);
    assert.match(list.body, />Failed <span class="count">0<\/span>/);
    assert.doesNotMatch(list.body, /<select[^>]*name="status"/);

    const today = ctx.clock.now().toISOString().slice(0, 10);
    const weekAgo = new Date(ctx.clock.now().getTime() - 6 * dayMs).toISOString().slice(0, 10);
    assert.match(
      list.body,
      new RegExp(`href="/dashboard/refunds\\?from=${weekAgo}&amp;to=${today}"[^>]*>Last 7 days<`),
    );
    const week = await owner.get(`/dashboard/refunds?from=${weekAgo}&to=${today}&status=succeeded`);
    assert.equal(week.status, 200);
    assert.match(week.body, />All <span class="count">2<\/span>/);
    assert.match(week.body, /aria-current="page"\s*>Succeeded <span class="count">2<\/span>/);
    assert.match(week.body, /aria-current="true">Last 7 days</);
    // The tabs keep the date range, the ranges keep the status.
    assert.match(week.body, new RegExp(`href="/dashboard/refunds\\?from=${weekAgo}&amp;to=${today}"\\s*>All `));
    assert.match(
      week.body,
      new RegExp(`href="/dashboard/refunds\\?status=succeeded&amp;from=${today}&amp;to=${today}"`),
    );
    assert.equal(week.body.split('<tr>').length - 2, 2);
  });

  it('filters refunds by amount in major units, refusing an amount the currency cannot have', async () => {
    const between = await owner.get('/dashboard/refunds?currency=usd&amountMin=10.50&amountMax=50');
    assert.equal(between.status, 200);
    const rows = between.body.split('<tr>').slice(2);
    assert.equal(rows.length, 2, between.body);
    assert.ok(rows.every((row) => /10\.50 <span|50\.00 <span/.test(row)));
    assert.match(between.body, /id="f-amountMin"[^>]*value="10\.50"/);
    const exported = await owner.get('/dashboard/refunds/export.csv?currency=USD&amountMin=10.50&amountMax=50');
    assert.equal(exported.status, 200);
    assert.deepEqual(
      exported.body
        .trim()
        .split('\r\n')
        .slice(1)
        .map((line) => line.split(',')[3])
        .sort(),
      ['1050', '5000'],
    );
    const refused = await owner.get('/dashboard/refunds?currency=JPY&amountMin=10.5');
    assert.equal(refused.status, 400);
    assert.match(
      refused.body,
      /id="f-amountMin-error"[^>]*>amountMin must be an amount in JPY with at most 0 decimals/,
    );
    const status = await owner.get('/dashboard/refunds?status=lost');
    assert.equal(status.status, 400);
    assert.match(status.body, /id="f-status-error"/);
  });

  it('lists invoices with the customer, status tabs with counts, quick date ranges and amount filters in major units', async () => {
    const list = await owner.get('/dashboard/invoices');
    assert.equal(list.status, 200);
    assert.match(list.body, /<td data-label="Customer">\s*<a[^>]*>\s*<span class="person">Ada Lovelace/);
    assert.match(list.body, /<span class="person">bob@lists\.test<\/span>/);
    assert.match(list.body, /3000 <span class="currency">JPY<\/span>/);
    assert.match(list.body, /aria-label="Invoices by status"/);
    assert.match(list.body, /aria-current="page"\s*>All <span class="count">3<\/span>/);
    assert.match(list.body, /href="\/dashboard\/invoices\?status=draft"\s*>Draft <span class="count">2<\/span>/);
    assert.match(list.body, />Open <span class="count">1<\/span>/);
    assert.match(list.body, />Paid <span class="count">0<\/span>/);
    assert.doesNotMatch(list.body, />Void </);
    assert.doesNotMatch(list.body, /<select[^>]*name="status"/);

    const today = ctx.clock.now().toISOString().slice(0, 10);
    const week = new Date(ctx.clock.now().getTime() - 6 * dayMs).toISOString().slice(0, 10);
    const recent = await owner.get(`/dashboard/invoices?status=draft&from=${week}&to=${today}`);
    assert.equal(recent.status, 200);
    assert.match(recent.body, />All <span class="count">2<\/span>/);
    assert.match(recent.body, /aria-current="page"\s*>Draft <span class="count">1<\/span>/);
    assert.match(recent.body, /aria-current="true">Last 7 days</);
    assert.equal(recent.body.split('<tr>').length - 2, 1);
    assert.match(recent.body, /25\.00 <span class="currency">USD<\/span>/);

    const large = await owner.get('/dashboard/invoices?currency=USD&amountMin=100');
    assert.equal(large.status, 200);
    assert.equal(large.body.split('<tr>').length - 2, 1);
    assert.match(large.body, /120\.00 <span class="currency">USD<\/span>/);
    const yen = await owner.get('/dashboard/invoices?currency=JPY&amountMax=3000');
    assert.match(yen.body, /3000 <span class="currency">JPY<\/span>/);
    assert.equal(yen.body.split('<tr>').length - 2, 1);
    const refused = await owner.get('/dashboard/invoices?currency=JPY&amountMax=29.99');
    assert.equal(refused.status, 400);
    assert.match(
      refused.body,
      /id="f-amountMax-error"[^>]*>amountMax must be an amount in JPY with at most 0 decimals/,
    );
  });

  it('takes an invoice draft’s unit prices in major units of its currency, naming a refused one', async () => {
    const form = await owner.get('/dashboard/invoices');
    assert.match(form.body, /<label for="f-lineItems\[0\]\.amount">Unit price<\/label>/);
    assert.doesNotMatch(form.body, /minor units/);
    const draft = async (currency: string, amount: string) =>
      owner.post('/dashboard/invoices', {
        customerId: bobId,
        currency,
        collectionMethod: 'send_invoice',
        'lineItems[0].description': 'Typed cake',
        'lineItems[0].amount': amount,
        'lineItems[0].quantity': '2',
      });
    for (const [currency, typed, minor] of [
      ['EUR', '25.00', '2500'],
      ['eur', '25,5', '2550'],
      ['JPY', '2500', '2500'],
      ['KWD', '1.250', '1250'],
    ] as const) {
      const created = await draft(currency, typed);
      assert.equal(created.status, 303, created.body);
      const id = /\/invoices\/(in_\d+)/.exec(created.location ?? '')?.[1];
      const stored = await merchant.call('GET', `/invoices/${id}`);
      assert.equal(stored.status, 200, stored.raw);
      assert.equal(stored.body.data.lineItems[0].amount, minor, `${typed} ${currency}`);
      assert.equal(stored.body.data.amountDue, String(BigInt(minor) * 2n));
    }
    const refused = await draft('JPY', '25.50');
    assert.equal(refused.status, 400);
    assert.match(
      refused.body,
      /id="f-lineItems\[0\]\.amount-error"[^>]*>Unit price of item 1 must be an amount in JPY with at most 0 decimals, like 1200/,
    );
    assert.match(refused.body, /value="Typed cake"/);
    assert.match(refused.body, /value="25\.50"/);
    const noCurrency = await draft('EURO', '25.00');
    assert.equal(noCurrency.status, 400);
    assert.match(noCurrency.body, /id="f-currency-error"[^>]*>currency must be an ISO 4217 code/);
  });
});
