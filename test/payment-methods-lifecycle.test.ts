/**
 * Payment methods after their creation: attached to and detached from customers, updated, listed,
 * bound to a stored credential, used by a payment and kept across a vault key rotation
 * (test/payment-methods.test.ts has their creation and its refusals).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { MerchantContext } from '../src/core/merchant-context.js';
import { DomainError } from '../src/core/errors.js';
import { databaseKind, injectRaw, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';
import { assertRefused, createCustomer, createMethod, storedRow, visa } from './helpers/payment-methods.js';

function contextOf(merchant: TestMerchant): MerchantContext {
  return { merchantId: merchant.id, mode: 'test', keyKind: 'private', tokenizationEnabled: true, mitEnabled: true };
}

describe(`payment methods: customers, updates, lists and the vault (${databaseKind})`, () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await startTestApp();
  });
  after(() => ctx.close());

  test('attaches a payment method to a customer without storing a credential', async () => {
    const merchant = await ctx.merchant();
    const customer = await createCustomer(merchant);
    const method = await createMethod(merchant);
    const attached = await merchant.call('POST', `/payment_methods/${method.id}/attach`, { customerId: customer.id });
    assert.equal(attached.status, 200, attached.raw);
    assert.equal(attached.body.data.customerId, customer.id);
    assert.equal(attached.body.data.card.tokenType, null);
    assert.deepEqual({ ...attached.body.data, customerId: null }, method);
    const again = await merchant.call('POST', `/payment_methods/${method.id}/attach`, { customerId: customer.id });
    assert.equal(again.status, 200, 'attaching to the same customer again changes nothing');
    assert.deepEqual(again.body.data, attached.body.data);
    const stored = await ctx.tessera.paymentMethods.loadForPayment(ctx.tessera.db, contextOf(merchant), method.id);
    assert.equal(stored.storedAt, null);
    assert.equal(stored.networkTransactionId, null);
  });

  test('refuses to attach a payment method attached to another customer', async () => {
    const merchant = await ctx.merchant();
    const first = await createCustomer(merchant);
    const second = await createCustomer(merchant);
    const method = await createMethod(merchant);
    await merchant.call('POST', `/payment_methods/${method.id}/attach`, { customerId: first.id });
    const response = await merchant.call('POST', `/payment_methods/${method.id}/attach`, { customerId: second.id });
    assert.equal(response.status, 400);
    assert.equal(response.body.code, 'payment_method_bound_elsewhere');
    const retrieved = await merchant.call('GET', `/payment_methods/${method.id}`);
    assert.equal(retrieved.body.data.customerId, first.id);
  });

  test('refuses to attach to a customer that does not exist, is deleted or belongs to another merchant', async () => {
    const merchant = await ctx.merchant();
    const stranger = await ctx.merchant();
    const method = await createMethod(merchant);
    const deleted = await createCustomer(merchant);
    await merchant.call('DELETE', `/customers/${deleted.id}`);
    const foreign = await createCustomer(stranger);
    for (const customerId of ['cus_1000000000000000000', deleted.id, foreign.id]) {
      const response = await merchant.call('POST', `/payment_methods/${method.id}/attach`, { customerId });
      assert.equal(response.status, 404, response.raw);
      assert.equal(response.body.code, 'resource_missing');
      assert.equal(response.body.data.param, 'customerId');
    }
    await assertRefused(merchant, {}, 'customerId', `/payment_methods/${method.id}/attach`);
    await assertRefused(merchant, { customerId: 5 }, 'customerId', `/payment_methods/${method.id}/attach`);
    await assertRefused(
      merchant,
      { customerId: deleted.id, extra: true },
      'extra',
      `/payment_methods/${method.id}/attach`,
    );
  });

  test('detaches a payment method for good: no customer, not listed, never attached or updated again', async () => {
    const merchant = await ctx.merchant();
    const customer = await createCustomer(merchant);
    const method = await createMethod(merchant);
    await merchant.call('POST', `/payment_methods/${method.id}/attach`, { customerId: customer.id });
    const detached = await merchant.call('POST', `/payment_methods/${method.id}/detach`);
    assert.equal(detached.status, 200, detached.raw);
    assert.equal(detached.body.data.customerId, null);
    assert.equal(detached.body.data.card.tokenType, null);
    const listed = await merchant.call('GET', `/payment_methods/list/${customer.id}`);
    assert.deepEqual(listed.body.data, { data: [], hasMore: false });
    const retrieved = await merchant.call('GET', `/payment_methods/${method.id}`);
    assert.equal(retrieved.status, 200, 'a detached method can still be read');
    for (const [path, body] of [
      [`/payment_methods/${method.id}/attach`, { customerId: customer.id }],
      [`/payment_methods/${method.id}/detach`, {}],
      [`/payment_methods/${method.id}/update`, { merchantPaySite: 'https://shop.example.com' }],
    ] as const) {
      const response = await merchant.call('POST', path, body);
      assert.equal(response.status, 400, path);
      assert.equal(response.body.code, 'invalid_state', path);
    }
    const forPayment = await ctx.tessera.paymentMethods.loadForPayment(ctx.tessera.db, contextOf(merchant), method.id);
    assert.ok(forPayment.detachedAt instanceof Date);
  });

  test('of two concurrent attaches to different customers, exactly one wins', async () => {
    const merchant = await ctx.merchant();
    const customers = [await createCustomer(merchant), await createCustomer(merchant)];
    for (let round = 0; round < 5; round += 1) {
      const method = await createMethod(merchant);
      const responses = await Promise.all(
        customers.map((customer) =>
          merchant.call('POST', `/payment_methods/${method.id}/attach`, { customerId: customer.id }),
        ),
      );
      const winners = responses.filter((response) => response.status === 200);
      assert.equal(winners.length, 1, responses.map((response) => response.raw).join('\n'));
      const loser = responses.find((response) => response.status !== 200);
      assert.equal(loser?.body.code, 'payment_method_bound_elsewhere');
      const retrieved = await merchant.call('GET', `/payment_methods/${method.id}`);
      assert.equal(retrieved.body.data.customerId, winners[0]?.body.data.customerId);
    }
  });

  test('never leaves a method attached to a customer deleted while it was being attached', async () => {
    const merchant = await ctx.merchant();
    for (let round = 0; round < 5; round += 1) {
      const customer = await createCustomer(merchant);
      const method = await createMethod(merchant);
      const [attached, deleted] = await Promise.all([
        merchant.call('POST', `/payment_methods/${method.id}/attach`, { customerId: customer.id }),
        merchant.call('DELETE', `/customers/${customer.id}`),
      ]);
      assert.equal(deleted.status, 200);
      assert.ok([200, 404].includes(attached.status), attached.raw);
      const retrieved = await merchant.call('GET', `/payment_methods/${method.id}`);
      assert.equal(retrieved.body.data.customerId, null);
    }
  });

  test('refuses to detach a payment method that is not attached', async () => {
    const merchant = await ctx.merchant();
    const method = await createMethod(merchant);
    const response = await merchant.call('POST', `/payment_methods/${method.id}/detach`, {});
    assert.equal(response.status, 400);
    assert.equal(response.body.code, 'invalid_state');
  });

  test('refuses an unknown field on detach, which takes none, naming it', async () => {
    const merchant = await ctx.merchant();
    const customer = await merchant.call('POST', '/customers/create', {});
    const method = await createMethod(merchant);
    await merchant.call('POST', `/payment_methods/${method.id}/attach`, { customerId: customer.body.data.id });
    const response = await merchant.call('POST', `/payment_methods/${method.id}/detach`, { customerId: 'x' });
    assert.equal(response.status, 400, response.raw);
    assert.equal(response.body.code, 'invalid_request');
    assert.equal(response.body.data.param, 'customerId');
    const retrieved = await merchant.call('GET', `/payment_methods/${method.id}`);
    assert.equal(retrieved.body.data.customerId, customer.body.data.id, 'still attached');
  });

  test("deleting a customer detaches the customer's payment methods", async () => {
    const merchant = await ctx.merchant();
    const customer = await createCustomer(merchant);
    const method = await createMethod(merchant);
    await merchant.call('POST', `/payment_methods/${method.id}/attach`, { customerId: customer.id });
    const deleted = await merchant.call('DELETE', `/customers/${customer.id}`);
    assert.equal(deleted.status, 200);
    const retrieved = await merchant.call('GET', `/payment_methods/${method.id}`);
    assert.equal(retrieved.body.data.customerId, null);
    const other = await createCustomer(merchant);
    const reattach = await merchant.call('POST', `/payment_methods/${method.id}/attach`, { customerId: other.id });
    assert.equal(reattach.body.code, 'invalid_state');
  });

  test('updates billing details, merchantPaySite and the expiry, and nothing else of the card', async () => {
    const merchant = await ctx.merchant();
    const method = await createMethod(
      merchant,
      {},
      { billingDetails: { firstName: 'Ana', address: { city: 'Lisbon', country: 'PT' } } },
    );
    const response = await merchant.call('POST', `/payment_methods/${method.id}/update`, {
      billingDetails: { lastName: 'Silva', address: { line1: 'Rua Augusta 1' } },
      merchantPaySite: 'https://shop.example.com',
      card: { expMonth: 9, expYear: '2032' },
    });
    assert.equal(response.status, 200, response.raw);
    const updated = response.body.data;
    assert.deepEqual(updated.billingDetails, {
      address: { city: 'Lisbon', country: 'PT', line1: 'Rua Augusta 1', line2: null, postalCode: null, state: null },
      email: null,
      firstName: 'Ana',
      lastName: 'Silva',
      phone: null,
      description: null,
    });
    assert.equal(updated.merchantPaySite, 'https://shop.example.com');
    assert.equal(updated.card.expMonth, '09');
    assert.equal(updated.card.expYear, '2032');
    assert.equal(updated.card.fingerprint, method.card.fingerprint);
    assert.equal(updated.card.last4, method.card.last4);
    assert.equal(updated.created, method.created);

    const onlyYear = await merchant.call('POST', `/payment_methods/${method.id}/update`, { card: { expYear: 2033 } });
    assert.equal(onlyYear.body.data.card.expMonth, '09');
    assert.equal(onlyYear.body.data.card.expYear, '2033');
    const empty = await merchant.call('POST', `/payment_methods/${method.id}/update`, {});
    assert.deepEqual(empty.body.data, onlyYear.body.data);
    const retrieved = await merchant.call('GET', `/payment_methods/${method.id}`);
    assert.deepEqual(retrieved.body.data, onlyYear.body.data);
  });

  test('refuses to update the card number, security code or any other card field', async () => {
    const merchant = await ctx.merchant();
    const method = await createMethod(merchant);
    const path = `/payment_methods/${method.id}/update`;
    await assertRefused(merchant, { card: { cardNo: '5555555555554444' } }, 'card.cardNo', path);
    await assertRefused(merchant, { card: { securityCode: '999' } }, 'card.securityCode', path);
    await assertRefused(merchant, { card: { brand: 'visa' } }, 'card.brand', path);
    await assertRefused(merchant, { type: 'card' }, 'type', path);
    await assertRefused(merchant, { card: { expMonth: '13' } }, 'card.expMonth', path);
    await assertRefused(merchant, { billingDetails: { email: 'nope' } }, 'billingDetails.email', path);
    const expired = await merchant.call('POST', path, { card: { expMonth: '01', expYear: '2026' } });
    assert.equal(expired.status, 400);
    assert.match(expired.body.data.param, /^card\.exp(Month|Year)$/);
    const unchanged = await merchant.call('GET', `/payment_methods/${method.id}`);
    assert.deepEqual(unchanged.body.data, method);
  });

  test("lists a customer's payment methods newest first, page by page", async () => {
    const merchant = await ctx.merchant();
    const customer = await createCustomer(merchant);
    const other = await createCustomer(merchant);
    const ids: string[] = [];
    for (let index = 0; index < 3; index += 1) {
      const method = await createMethod(merchant);
      await merchant.call('POST', `/payment_methods/${method.id}/attach`, { customerId: customer.id });
      ids.push(method.id);
      ctx.clock.advance(1000);
    }
    const elsewhere = await createMethod(merchant);
    await merchant.call('POST', `/payment_methods/${elsewhere.id}/attach`, { customerId: other.id });
    await createMethod(merchant);
    const newestFirst = [...ids].reverse();

    const all = await merchant.call('GET', `/payment_methods/list/${customer.id}`);
    assert.equal(all.status, 200, all.raw);
    assert.deepEqual(
      all.body.data.data.map((method: { id: string }) => method.id),
      newestFirst,
    );
    assert.equal(all.body.data.hasMore, false);
    assert.ok(all.body.data.data.every((method: { customerId: string }) => method.customerId === customer.id));

    const first = await merchant.call('GET', `/payment_methods/list/${customer.id}?limit=2`);
    assert.deepEqual(
      first.body.data.data.map((method: { id: string }) => method.id),
      newestFirst.slice(0, 2),
    );
    assert.equal(first.body.data.hasMore, true);
    const second = await merchant.call(
      'GET',
      `/payment_methods/list/${customer.id}?limit=2&startingAfter=${newestFirst[1]}`,
    );
    assert.deepEqual(
      second.body.data.data.map((method: { id: string }) => method.id),
      newestFirst.slice(2),
    );
    assert.equal(second.body.data.hasMore, false);
    const back = await merchant.call(
      'GET',
      `/payment_methods/list/${customer.id}?limit=1&endingBefore=${newestFirst[1]}`,
    );
    assert.deepEqual(
      back.body.data.data.map((method: { id: string }) => method.id),
      newestFirst.slice(0, 1),
    );
    const foreignCursor = await merchant.call(
      'GET',
      `/payment_methods/list/${customer.id}?startingAfter=${elsewhere.id}`,
    );
    assert.equal(foreignCursor.status, 400);
    assert.equal(foreignCursor.body.data.param, 'startingAfter');
    assert.ok(!all.raw.includes(visa));
  });

  test('answers the list of an unknown or deleted customer with 404', async () => {
    const merchant = await ctx.merchant();
    const unknown = await merchant.call('GET', '/payment_methods/list/cus_1000000000000000000');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 'resource_missing');
    assert.equal(unknown.body.data.param, 'customerId');
    const customer = await createCustomer(merchant);
    await merchant.call('DELETE', `/customers/${customer.id}`);
    const deleted = await merchant.call('GET', `/payment_methods/list/${customer.id}`);
    assert.equal(deleted.status, 404);
  });

  test("answers another merchant's payment method or customer as not found", async () => {
    const owner = await ctx.merchant();
    const stranger = await ctx.merchant();
    const customer = await createCustomer(owner);
    const method = await createMethod(owner);
    await owner.call('POST', `/payment_methods/${method.id}/attach`, { customerId: customer.id });
    const strangersCustomer = await createCustomer(stranger);
    for (const [httpMethod, path, body] of [
      ['GET', `/payment_methods/${method.id}`, undefined],
      ['GET', `/payment_methods/list/${customer.id}`, undefined],
      ['POST', `/payment_methods/${method.id}/attach`, { customerId: strangersCustomer.id }],
      ['POST', `/payment_methods/${method.id}/detach`, {}],
      ['POST', `/payment_methods/${method.id}/update`, { merchantPaySite: 'https://evil.example.com' }],
    ] as const) {
      const response = await stranger.call(httpMethod, path, body);
      assert.equal(response.status, 404, `${httpMethod} ${path}`);
      assert.equal(response.body.code, 'resource_missing');
    }
    const untouched = await owner.call('GET', `/payment_methods/${method.id}`);
    assert.equal(untouched.body.data.customerId, customer.id);
    assert.equal(untouched.body.data.merchantPaySite, null);
    await assert.rejects(
      ctx.tessera.paymentMethods.loadForPayment(ctx.tessera.db, contextOf(stranger), method.id),
      (err: unknown) =>
        err instanceof DomainError && err.code === 'resource_missing' && err.details?.param === 'paymentMethod',
    );
  });

  test('does not echo an id that is not of the id form', async () => {
    const merchant = await ctx.merchant();
    const response = await merchant.call('GET', '/payment_methods/%3Cimg%3E');
    assert.equal(response.status, 404);
    assert.ok(!response.raw.includes('img'));
  });

  test('binds a stored credential once, to one customer, and never to a detached method', async () => {
    const merchant = await ctx.merchant();
    const first = await createCustomer(merchant);
    const second = await createCustomer(merchant);
    const method = await createMethod(merchant);
    const service = ctx.tessera.paymentMethods;
    const merchantContext = contextOf(merchant);
    const bind = (customerId: string, networkToken: string | null = '4895370012003478') =>
      service.bindStoredCredential(ctx.tessera.db, merchantContext, {
        paymentMethodId: method.id,
        customerId,
        networkTransactionId: 'ntx_123',
        networkToken,
        now: ctx.clock.now(),
      });
    assert.equal(await bind(first.id), true);
    const firstStoredAt = (await service.loadForPayment(ctx.tessera.db, merchantContext, method.id)).storedAt;
    assert.equal(await bind(second.id), false, 'another customer cannot take a bound method');
    ctx.clock.advance(60_000);
    assert.equal(await bind(first.id, null), true, 'a later storing payment of the same pair binds again');
    const retrieved = await merchant.call('GET', `/payment_methods/${method.id}`);
    assert.equal(retrieved.body.data.customerId, first.id);
    assert.equal(retrieved.body.data.card.tokenType, 'network_token', 'the network token is kept');
    assert.ok(!(await storedRow(ctx, method.id)).includes('4895370012003478'), 'the network token is encrypted');
    const forPayment = await service.loadForPayment(ctx.tessera.db, merchantContext, method.id);
    assert.equal(forPayment.customerId, first.id);
    assert.equal(forPayment.networkTransactionId, 'ntx_123');
    assert.deepEqual(forPayment.storedAt, firstStoredAt, 'the credential keeps the time it was first stored');

    await merchant.call('POST', `/payment_methods/${method.id}/detach`);
    assert.equal(await bind(first.id), false, 'a detached method is never bound again');
    const detached = await merchant.call('GET', `/payment_methods/${method.id}`);
    assert.equal(detached.body.data.card.tokenType, null);
    const afterDetach = await service.loadForPayment(ctx.tessera.db, merchantContext, method.id);
    assert.equal(afterDetach.networkTransactionId, null);
    assert.equal(afterDetach.storedAt, null);
  });

  test('gives a payment the card in clear and erases the security code after its first use', async () => {
    const merchant = await ctx.merchant();
    const method = await createMethod(merchant, { cardNo: '378282246310005', securityCode: '7373' });
    const service = ctx.tessera.paymentMethods;
    const forPayment = await service.loadForPayment(ctx.tessera.db, contextOf(merchant), method.id);
    assert.deepEqual(forPayment.card, {
      number: '378282246310005',
      brand: method.card.brand,
      last4: '0005',
      expMonth: '04',
      expYear: '2030',
      country: method.card.country,
      fingerprint: method.card.fingerprint,
      securityCode: '7373',
    });
    await service.eraseSecurityCode(ctx.tessera.db, method.id);
    const later = await service.loadForPayment(ctx.tessera.db, contextOf(merchant), method.id);
    assert.equal(later.card.securityCode, null);
    assert.equal(later.card.number, '378282246310005');
  });

  test('keeps payment methods usable across a vault key rotation, with unchanged fingerprints', async () => {
    const merchant = await ctx.merchant();
    const methods = [
      await createMethod(merchant),
      await createMethod(merchant, { cardNo: '5555555555554444' }),
      await createMethod(merchant, { cardNo: '378282246310005', securityCode: '7373' }),
    ];
    const rotate = () =>
      injectRaw(ctx, {
        method: 'POST',
        url: '/admin/v1/vault/rotate_key',
        headers: { authorization: `Bearer ${ctx.operatorKey}` },
      });
    const response = await rotate();
    assert.equal(response.statusCode, 200, response.body);
    const result = response.json();
    assert.equal(result.code, 'success');
    assert.equal(typeof result.data.activeKeyId, 'string');
    assert.ok(result.data.reencrypted >= methods.length, `re-encrypted ${result.data.reencrypted}`);

    const [keyIds] = await ctx.tessera.db.query<{ keys: string[] }>(
      `SELECT array_agg(DISTINCT split_part(card_number_encrypted, ':', 1)) AS keys FROM payment_methods
       WHERE merchant_id = $1`,
      [merchant.id],
    );
    assert.deepEqual(keyIds?.keys, [result.data.activeKeyId], 'every card number is under the new key');

    for (const method of methods) {
      const retrieved = await merchant.call('GET', `/payment_methods/${method.id}`);
      assert.equal(retrieved.status, 200);
      assert.deepEqual(retrieved.body.data, method, 'the answer, fingerprint included, is unchanged');
      const text = await storedRow(ctx, method.id);
      for (const number of [visa, '5555555555554444', '378282246310005']) assert.ok(!text.includes(number));
    }
    const forPayment = await ctx.tessera.paymentMethods.loadForPayment(
      ctx.tessera.db,
      contextOf(merchant),
      methods[2]!.id,
    );
    assert.equal(forPayment.card.number, '378282246310005');
    assert.equal(forPayment.card.securityCode, '7373');

    const again = await createMethod(merchant);
    assert.equal(again.card.fingerprint, methods[0]!.card.fingerprint, 'a new method of the same card matches');
    assert.equal((await rotate()).statusCode, 200, 'rotating twice works');
    const afterSecond = await ctx.tessera.paymentMethods.loadForPayment(ctx.tessera.db, contextOf(merchant), again.id);
    assert.equal(afterSecond.card.number, visa);
  });

  test('refuses a vault key rotation without the operator key', async () => {
    const merchant = await ctx.merchant();
    for (const authorization of [undefined, `Bearer ${merchant.privateKey}`, 'Bearer wrong-operator-key-000000']) {
      const response = await injectRaw(ctx, {
        method: 'POST',
        url: '/admin/v1/vault/rotate_key',
        headers: authorization ? { authorization } : {},
      });
      assert.equal(response.statusCode, 401);
      assert.equal(response.json().code, 'authentication_error');
    }
  });
});
