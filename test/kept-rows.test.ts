import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { databaseKind, startTestApp, type TestContext } from './helpers/harness.js';

/*
 * Decision 0032 (migration 0170): a payment's write checks no foreign key but its deliveries'
 * event; instead the rows payments, events and deliveries name — merchants, customers, payment
 * methods, webhook endpoints — are kept for ever, which the database enforces. A payment made
 * through the API names rows that exist, and none of them can be deleted or change its id afterwards.
 */
describe(`merchants, customers, payment methods and webhook endpoints are kept (${databaseKind})`, () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await startTestApp();
  });
  after(() => ctx.close());

  async function paidCustomer() {
    const merchant = await ctx.merchant();
    const endpoint = await merchant.call('POST', '/webhook_endpoints/create', {
      url: 'http://localhost:4000/webhooks/tessera',
    });
    assert.equal(endpoint.status, 200, endpoint.raw);
    const customer = await merchant.call('POST', '/customers/create', { email: 'kept@example.com' });
    assert.equal(customer.status, 200, customer.raw);
    const method = await merchant.call('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    assert.equal(method.status, 200, method.raw);
    const attached = await merchant.call('POST', `/payment_methods/${method.body.data.id}/attach`, {
      customerId: customer.body.data.id,
    });
    assert.equal(attached.status, 200, attached.raw);
    const payment = await merchant.call('POST', '/payment/create', {
      amount: '1999',
      currency: 'USD',
      customerId: customer.body.data.id,
      paymentMethod: method.body.data.id,
      confirm: true,
    });
    assert.equal(payment.status, 200, payment.raw);
    assert.equal(payment.body.data.status, 'succeeded');
    return {
      api: merchant,
      merchant: merchant.id,
      customer: customer.body.data.id,
      method: method.body.data.id,
      endpoint: endpoint.body.data.id as string,
      payment: payment.body.data.id as string,
    };
  }

  test('a payment, its event and its delivery name rows that exist, and the write checks only the delivery’s event key', async () => {
    const { merchant, customer, method, endpoint, payment } = await paidCustomer();
    const [named] = await ctx.tessera.db.query<{ payments: string | number; deliveries: string | number }>(
      `SELECT (SELECT count(*) FROM payments AS p
                JOIN merchants AS m ON m.id = p.merchant_id
                JOIN customers AS c ON c.id = p.customer_id
                JOIN payment_methods AS pm ON pm.id = p.payment_method_id
               WHERE p.id = $5 AND p.merchant_id = $1 AND p.customer_id = $2 AND p.payment_method_id = $3) AS payments,
              (SELECT count(*) FROM events AS e
                JOIN merchants AS m ON m.id = e.merchant_id
                JOIN webhook_deliveries AS d ON d.event_id = e.id
                JOIN webhook_endpoints AS w ON w.id = d.endpoint_id
               WHERE e.object_id = $5 AND e.merchant_id = $1 AND d.endpoint_id = $4) AS deliveries`,
      [merchant, customer, method, endpoint, payment],
    );
    assert.equal(Number(named!.payments), 1);
    assert.ok(Number(named!.deliveries) >= 1);
    const keys = await ctx.tessera.db.query<{ conname: string }>(
      `SELECT conname FROM pg_constraint
        WHERE contype = 'f'
          AND conrelid IN ('payments'::regclass, 'events'::regclass, 'event_sequences'::regclass,
                           'webhook_deliveries'::regclass)
        ORDER BY conname`,
    );
    assert.deepEqual(
      keys.map((key) => key.conname),
      ['webhook_deliveries_event_id_fkey'],
    );
  });

  test('deleting a merchant, customer, payment method or endpoint, or changing its id, is refused and changes nothing', async () => {
    const { api, merchant, customer, method, endpoint } = await paidCustomer();
    const rows = [
      ['merchants', merchant],
      ['customers', customer],
      ['payment_methods', method],
      ['webhook_endpoints', endpoint],
    ] as const;
    for (const [table, id] of rows) {
      for (const sql of [
        `DELETE FROM ${table} WHERE id = $1`,
        `UPDATE ${table} SET id = id || '_moved' WHERE id = $1`,
      ]) {
        await assert.rejects(ctx.tessera.db.query(sql, [id]), (err: Error & { code?: string }) => {
          assert.equal(err.code, '23001', `${sql}: ${err.message}`);
          assert.match(err.message, new RegExp(`rows of ${table} are never deleted and keep their id`));
          return true;
        });
      }
      const [kept] = await ctx.tessera.db.query<{ count: string | number }>(
        `SELECT count(*) AS count FROM ${table} WHERE id = $1`,
        [id],
      );
      assert.equal(Number(kept!.count), 1, table);
    }
    // What the API calls deleting is marking: the method's detach and the customer's and the
    // endpoint's delete answer as before, and each row stays, marked.
    for (const [verb, path] of [
      ['POST', `/payment_methods/${method}/detach`],
      ['DELETE', `/customers/${customer}`],
      ['DELETE', `/webhook_endpoints/${endpoint}`],
    ] as const) {
      const response = await api.call(verb, path);
      assert.equal(response.status, 200, `${verb} ${path}: ${response.raw}`);
    }
    const [marked] = await ctx.tessera.db.query<{ count: string | number }>(
      `SELECT (SELECT count(*) FROM customers WHERE id = $1 AND deleted_at IS NOT NULL)
            + (SELECT count(*) FROM webhook_endpoints WHERE id = $2 AND deleted_at IS NOT NULL)
            + (SELECT count(*) FROM payment_methods WHERE id = $3 AND detached_at IS NOT NULL) AS count`,
      [customer, endpoint, method],
    );
    assert.equal(Number(marked!.count), 3);
  });
});
