/**
 * DESIGN §13 on the lists beyond payments, at the HTTP level: refunds and invoices with people,
 * status tabs with counts, quick date ranges and amount filters in major units; the invoice
 * draft in major units; webhook delivery statuses as badges; and cells labelled by their own
 * column (the 390 px layout shows each cell under its header's name).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';
import { signedInOwner, type DashboardClient } from './helpers/dashboard.js';

const password = 'correct horse battery';

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

describe('dashboard: lists as staff read them (DESIGN §13)', () => {
  let ctx: TestContext;
  let merchant: TestMerchant;
  let owner: DashboardClient;
  let customerId = '';
  let paidId = '';
  let endpointId = '';

  const card = async (cardNo: string) => {
    const created = await merchant.call('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo, expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    assert.equal(created.status, 200, created.raw);
    return created.body.data.id as string;
  };
  const pay = async (amount: string, extra: Record<string, unknown> = {}) => {
    const paid = await merchant.call('POST', '/payment/create', {
      amount,
      currency: 'USD',
      confirm: true,
      paymentMethod: await card('4242424242424242'),
      ...extra,
    });
    assert.equal(paid.status, 200, paid.raw);
    return paid.body.data.id as string;
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
    paidId = await pay('123456', { customerId });
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
      ['Status', 'Succeeded'],
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
});
