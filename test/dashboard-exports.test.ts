import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';
import { signedInOwner, type DashboardClient } from './helpers/dashboard.js';

/** Parses RFC 4180 text (quoted cells, doubled quotes, CRLF) into rows of cells. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let index = 0; index < text.length; index += 1) {
    const character = text[index]!;
    if (quoted && character === '"' && text[index + 1] === '"') {
      cell += '"';
      index += 1;
    } else if (character === '"') {
      quoted = !quoted;
    } else if (!quoted && character === ',') {
      row.push(cell);
      cell = '';
    } else if (!quoted && character === '\r' && text[index + 1] === '\n') {
      rows.push([...row, cell]);
      row = [];
      cell = '';
      index += 1;
    } else {
      cell += character;
    }
  }
  return rows;
}

describe('dashboard: CSV exports of payments, customers, refunds and invoices (docs/dashboard.md#roles)', () => {
  let ctx: TestContext;
  let merchant: TestMerchant;
  let owner: DashboardClient;
  const card = '4242424242424242';
  const paid: string[] = [];
  let customerId = '';

  before(async () => {
    ctx = await startTestApp();
    merchant = await ctx.merchant({ name: 'Export shop' });
    owner = await signedInOwner(ctx, merchant.id, 'owner@exports.test', 'correct horse battery');
    const customer = await merchant.call('POST', '/customers/create', {
      email: 'formula@exports.test',
      firstName: '=HYPERLINK("http://evil.example","x")',
      lastName: '+1 Smith',
      description: 'Says "hi", twice\nand a line',
    });
    customerId = customer.body.data.id;
    // More than one page of the service (100 rows) to export.
    for (let index = 0; index < 104; index += 1)
      await merchant.call('POST', '/customers/create', { email: `c${index}@exports.test` });
    const method = await merchant.call('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo: card, expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    for (const amount of ['1500', '2500']) {
      const payment = await merchant.call('POST', '/payment/create', {
        amount,
        currency: 'USD',
        confirm: true,
        paymentMethod: method.body.data.id,
        customerId,
        orderNo: `ORD-${amount}`,
      });
      assert.equal(payment.status, 200, payment.raw);
      paid.push(payment.body.data.id);
    }
    const refund = await merchant.call('POST', '/refunds/create', { paymentId: paid[0], amount: '100' });
    assert.equal(refund.status, 200, refund.raw);
    const invoice = await merchant.call('POST', '/invoices/create', {
      customerId,
      currency: 'USD',
      collectionMethod: 'send_invoice',
      lineItems: [{ description: 'Tea', amount: '1200', quantity: 2 }],
    });
    assert.equal(invoice.status, 200, invoice.raw);
  });
  after(() => ctx?.close());

  it("exports payments with the list's filters as CSV, with the expected header and no card number", async () => {
    const list = await owner.get('/dashboard/payments?orderNo=ORD-2500');
    const link = /href="(\/dashboard\/payments\/export\.csv[^"]*)"/.exec(list.body)?.[1]?.replace(/&amp;/g, '&');
    assert.equal(link, '/dashboard/payments/export.csv?orderNo=ORD-2500');
    const answer = await owner.get(link);
    assert.equal(answer.status, 200);
    const rows = parseCsv(answer.body);
    assert.deepEqual(rows[0], [
      'id',
      'created',
      'status',
      'amount',
      'currency',
      'customerId',
      'orderNo',
      'description',
    ]);
    assert.equal(rows.length, 2);
    assert.deepEqual(rows[1]!.slice(2, 7), ['succeeded', '2500', 'USD', customerId, 'ORD-2500']);
    assert.equal(rows[1]![0], paid[1]);
    const all = await owner.get('/dashboard/payments/export.csv');
    assert.equal(parseCsv(all.body).length, 3);
    assert.doesNotMatch(all.body + answer.body, new RegExp(card));
  });

  it('answers text/csv as a download, audited', async () => {
    const response = await ctx.tessera.server.inject({
      method: 'GET',
      url: '/dashboard/refunds/export.csv',
      headers: { cookie: [...owner.cookies].map(([name, value]) => `${name}=${value}`).join('; ') },
    });
    assert.match(String(response.headers['content-type']), /^text\/csv/);
    assert.match(String(response.headers['content-disposition']), /attachment; filename="refunds-test\.csv"/);
    const rows = parseCsv(response.body);
    assert.deepEqual(rows[0], [
      'id',
      'created',
      'status',
      'amount',
      'currency',
      'paymentId',
      'reason',
      'failureReason',
    ]);
    assert.equal(rows[1]![5], paid[0]);
    const audited = await ctx.tessera.db.query<{ action: string }>(
      "SELECT action FROM audit_log WHERE merchant_id = $1 AND action LIKE 'export.%'",
      [merchant.id],
    );
    assert.ok(audited.some((row) => row.action === 'export.refunds'));
    assert.ok(audited.some((row) => row.action === 'export.payments'));
  });

  it('pages through every customer, quoting cells and defusing formulas', async () => {
    const answer = await owner.get('/dashboard/customers/export.csv');
    const rows = parseCsv(answer.body);
    assert.equal(rows.length, 1 + 105);
    assert.equal(new Set(rows.slice(1).map((row) => row[0])).size, 105);
    const formula = rows.find((row) => row[0] === customerId)!;
    assert.equal(formula[3], `'=HYPERLINK("http://evil.example","x")`);
    assert.equal(formula[4], "'+1 Smith");
    assert.equal(formula[7], 'Says "hi", twice\nand a line');
    const filtered = parseCsv((await owner.get('/dashboard/customers/export.csv?email=c7%40exports.test')).body);
    assert.equal(filtered.length, 2);
  });

  it('exports invoices with their filters, and refuses a bad filter naming it', async () => {
    const rows = parseCsv((await owner.get(`/dashboard/invoices/export.csv?customer=${customerId}&status=draft`)).body);
    assert.deepEqual(rows[0]!.slice(0, 4), ['id', 'number', 'created', 'status']);
    assert.equal(rows.length, 2);
    assert.equal(rows[1]![3], 'draft');
    assert.equal(rows[1]![6], '2400');
    const refused = await owner.get('/dashboard/payments/export.csv?from=yesterday');
    assert.equal(refused.status, 400);
    assert.match(refused.body, /from must be a date/);
  });
});
