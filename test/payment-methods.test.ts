import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { MerchantContext } from '../src/core/merchant-context.js';
import { DomainError } from '../src/core/errors.js';
import { databaseKind, injectRaw, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';

const timestampForm = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** docs/api.md#sandbox-test-cards: every sandbox test card and the brand it belongs to. */
const testCards: Array<[number: string, brand: string]> = [
  ['4242424242424242', 'visa'],
  ['5555555555554444', 'mastercard'],
  ['378282246310005', 'amex'],
  ['3566002020360505', 'jcb'],
  ['6011111111111117', 'discover'],
  ['4000000000000002', 'visa'],
  ['4000000000000077', 'visa'],
  ['4000000000009995', 'visa'],
  ['4000000000000069', 'visa'],
  ['4000000000000127', 'visa'],
  ['4000002500003155', 'visa'],
  ['4000000000000341', 'visa'],
  ['4000000000000630', 'visa'],
  ['4000000000000259', 'visa'],
  ['4000000000004954', 'visa'],
];

const visa = '4242424242424242';

/** Completes `partial` with the Luhn check digit. */
function withLuhnDigit(partial: string): string {
  let sum = 0;
  for (let index = 0; index < partial.length; index += 1) {
    let digit = Number(partial[partial.length - 1 - index]);
    if (index % 2 === 0) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return `${partial}${(10 - (sum % 10)) % 10}`;
}

function cardBody(card: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  return {
    type: 'card',
    card: { cardNo: visa, expMonth: '04', expYear: '2030', securityCode: '123', ...card },
    ...extra,
  };
}

function contextOf(merchant: TestMerchant): MerchantContext {
  return { merchantId: merchant.id, mode: 'test', keyKind: 'private', tokenizationEnabled: true, mitEnabled: true };
}

describe(`payment methods (${databaseKind})`, () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await startTestApp();
  });
  after(() => ctx.close());

  async function createMethod(merchant: TestMerchant, card: Record<string, unknown> = {}, extra = {}) {
    const response = await merchant.call('POST', '/payment_methods/create', cardBody(card, extra));
    assert.equal(response.status, 200, response.raw);
    return response.body.data;
  }

  async function createCustomer(merchant: TestMerchant) {
    const response = await merchant.call('POST', '/customers/create', { email: 'holder@example.com' });
    assert.equal(response.status, 200, response.raw);
    return response.body.data as { id: string };
  }

  /** The row as stored, every column as text. */
  async function storedRow(id: string): Promise<string> {
    const [row] = await ctx.tessera.db.query<{ text: string }>(
      'SELECT row_to_json(pm)::text AS text FROM payment_methods pm WHERE id = $1',
      [id],
    );
    assert.ok(row, `row ${id} exists`);
    return row.text;
  }

  for (const [number, brand] of testCards) {
    test(`creates a payment method from the test card ending ${number.slice(-4)} (${brand}) without answering its number`, async () => {
      const merchant = await ctx.merchant();
      const securityCode = brand === 'amex' ? '7373' : '737';
      const response = await merchant.call('POST', '/payment_methods/create', {
        type: 'card',
        card: { cardNo: number, expMonth: '4', expYear: '2030', securityCode },
      });
      assert.equal(response.status, 200, response.raw);
      const method = response.body.data;
      assert.match(method.id, /^pm_\d{19}$/);
      assert.match(method.created, timestampForm);
      assert.deepEqual(method, {
        id: method.id,
        type: 'card',
        billingDetails: {
          address: null,
          email: null,
          firstName: null,
          lastName: null,
          phone: null,
          description: null,
        },
        created: ctx.clock.now().toISOString(),
        customerId: null,
        card: {
          brand,
          country: method.card.country,
          expMonth: '04',
          expYear: '2030',
          fingerprint: method.card.fingerprint,
          last4: number.slice(-4),
          tokenType: null,
        },
        merchantPaySite: null,
        boleto: null,
        pix: null,
        creditCardBrazil: null,
      });
      assert.match(method.card.country, /^[A-Z]{2}$/);
      assert.ok(method.card.fingerprint.length >= 16);
      assert.ok(!response.raw.includes(number), 'the card number is not answered');
      assert.ok(!response.raw.includes(number.slice(0, 8)), 'no long part of the card number is answered');
      assert.ok(!response.raw.includes(`"${securityCode}"`), 'the security code is not answered');
      const retrieved = await merchant.call('GET', `/payment_methods/${method.id}`);
      assert.deepEqual(retrieved.body.data, method);
      assert.ok(!retrieved.raw.includes(number));
    });
  }

  test('never stores the card number or the security code in clear', async () => {
    const merchant = await ctx.merchant();
    const method = await createMethod(merchant, { securityCode: '973' });
    const text = await storedRow(method.id);
    assert.ok(!text.includes(visa));
    assert.ok(!text.includes('"973"'));
    assert.ok(!text.includes(':973'));
  });

  test('echoes billing details and merchantPaySite under their exact names', async () => {
    const merchant = await ctx.merchant();
    const method = await createMethod(
      merchant,
      {},
      {
        billingDetails: {
          address: {
            city: 'Lisbon',
            country: 'pt',
            line1: 'Rua Augusta 1',
            line2: '',
            postalCode: '1100-048',
            state: 'Lisboa',
          },
          email: 'ana@example.com',
          firstName: 'Ana',
          lastName: 'Silva',
          phone: '+351 912 345 678',
          description: 'Personal card',
        },
        merchantPaySite: 'https://shop.example.com/checkout',
      },
    );
    assert.deepEqual(method.billingDetails, {
      address: {
        city: 'Lisbon',
        country: 'PT',
        line1: 'Rua Augusta 1',
        line2: '',
        postalCode: '1100-048',
        state: 'Lisboa',
      },
      email: 'ana@example.com',
      firstName: 'Ana',
      lastName: 'Silva',
      phone: '+351 912 345 678',
      description: 'Personal card',
    });
    assert.equal(method.merchantPaySite, 'https://shop.example.com/checkout');
  });

  test('answers billing details not given as null fields, and treats explicit nulls as absent', async () => {
    const merchant = await ctx.merchant();
    const method = await createMethod(
      merchant,
      { securityCode: null },
      { billingDetails: { email: 'b@example.com', address: null, phone: null }, merchantPaySite: null },
    );
    assert.deepEqual(method.billingDetails, {
      address: null,
      email: 'b@example.com',
      firstName: null,
      lastName: null,
      phone: null,
      description: null,
    });
    assert.equal(method.merchantPaySite, null);
  });

  test('accepts the expiry as integers and answers it as two- and four-digit strings', async () => {
    const merchant = await ctx.merchant();
    const method = await createMethod(merchant, { expMonth: 1, expYear: 2031 });
    assert.equal(method.card.expMonth, '01');
    assert.equal(method.card.expYear, '2031');
    const twelve = await createMethod(merchant, { expMonth: '12', expYear: '2031' });
    assert.equal(twelve.card.expMonth, '12');
  });

  test('accepts a card without a security code', async () => {
    const merchant = await ctx.merchant();
    const response = await merchant.call('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo: visa, expMonth: '04', expYear: '2030' },
    });
    assert.equal(response.status, 200, response.raw);
  });

  test('accepts a card that expires at the end of the current month', async () => {
    const merchant = await ctx.merchant();
    const now = ctx.clock.now();
    const method = await createMethod(merchant, {
      expMonth: now.getUTCMonth() + 1,
      expYear: now.getUTCFullYear(),
    });
    assert.equal(method.card.expMonth, String(now.getUTCMonth() + 1).padStart(2, '0'));
  });

  test('gives the same card the same fingerprint within a merchant and a different one at another merchant', async () => {
    const first = await ctx.merchant();
    const second = await ctx.merchant();
    const a = await createMethod(first);
    const b = await createMethod(first, { expMonth: '05', expYear: '2031', securityCode: '456' });
    const c = await createMethod(second);
    const other = await createMethod(first, { cardNo: '5555555555554444' });
    assert.equal(a.card.fingerprint, b.card.fingerprint);
    assert.notEqual(a.card.fingerprint, c.card.fingerprint);
    assert.notEqual(a.card.fingerprint, other.card.fingerprint);
    assert.notEqual(a.id, b.id);
  });

  /** Asserts a 400 invalid_request naming `param` whose answer quotes no card number. */
  async function assertRefused(merchant: TestMerchant, body: unknown, param: string, path = '/payment_methods/create') {
    const response = await merchant.call('POST', path, body);
    assert.equal(response.status, 400, `${param}: ${response.raw}`);
    assert.equal(response.body.code, 'invalid_request');
    assert.equal(response.body.data.param, param, response.raw);
    assert.ok(response.body.msg.includes(param), response.body.msg);
    const card = (body as { card?: { cardNo?: unknown } }).card;
    if (typeof card?.cardNo === 'string' && card.cardNo.length >= 6) {
      assert.ok(!response.raw.includes(card.cardNo), 'the answer does not quote the card number');
      assert.ok(!response.raw.includes(card.cardNo.slice(0, 6)), 'the answer does not quote a part of the card number');
    }
    return response;
  }

  test('refuses a card number that fails the Luhn check', async () => {
    const merchant = await ctx.merchant();
    await assertRefused(merchant, cardBody({ cardNo: '4242424242424241' }), 'card.cardNo');
    await assertRefused(merchant, cardBody({ cardNo: '5555555555554445' }), 'card.cardNo');
  });

  test('refuses a card number of the wrong length for its brand', async () => {
    const merchant = await ctx.merchant();
    // An American Express number is 15 digits; this one is 16 and passes Luhn.
    await assertRefused(merchant, cardBody({ cardNo: withLuhnDigit('378282246310005') }), 'card.cardNo');
    // A Mastercard number is 16 digits.
    await assertRefused(merchant, cardBody({ cardNo: withLuhnDigit('55555555555544') }), 'card.cardNo');
  });

  test('refuses a card number that is too short or too long to be a card', async () => {
    const merchant = await ctx.merchant();
    await assertRefused(merchant, cardBody({ cardNo: '42424242424' }), 'card.cardNo');
    await assertRefused(merchant, cardBody({ cardNo: '42424242424242424242' }), 'card.cardNo');
  });

  test('refuses a card number of no known brand', async () => {
    const merchant = await ctx.merchant();
    await assertRefused(merchant, cardBody({ cardNo: withLuhnDigit('900000000000000') }), 'card.cardNo');
    await assertRefused(merchant, cardBody({ cardNo: withLuhnDigit('100000000000000') }), 'card.cardNo');
  });

  test('refuses an expiry month of 13 or 0', async () => {
    const merchant = await ctx.merchant();
    for (const expMonth of ['13', 13, '0', 0, '00']) {
      await assertRefused(merchant, cardBody({ expMonth }), 'card.expMonth');
    }
  });

  test('refuses a card that has expired', async () => {
    const merchant = await ctx.merchant();
    // The test clock stands at 2026-11-22.
    const lastMonth = await merchant.call(
      'POST',
      '/payment_methods/create',
      cardBody({ expMonth: '10', expYear: '2026' }),
    );
    assert.equal(lastMonth.status, 400);
    assert.equal(lastMonth.body.code, 'invalid_request');
    assert.match(lastMonth.body.data.param, /^card\.exp(Month|Year)$/);
    await assertRefused(merchant, cardBody({ expMonth: '12', expYear: '2025' }), 'card.expYear');
  });

  test('refuses an expiry year too far in the future', async () => {
    const merchant = await ctx.merchant();
    await assertRefused(merchant, cardBody({ expYear: '2999' }), 'card.expYear');
  });

  test('refuses an American Express card with a 3-digit security code, and a Visa with a 4-digit one', async () => {
    const merchant = await ctx.merchant();
    await assertRefused(merchant, cardBody({ cardNo: '378282246310005', securityCode: '123' }), 'card.securityCode');
    await assertRefused(merchant, cardBody({ securityCode: '1234' }), 'card.securityCode');
  });

  test('refuses a request without type, card, cardNo, expMonth or expYear, naming the field', async () => {
    const merchant = await ctx.merchant();
    const full = cardBody();
    const { type: _type, ...withoutType } = full;
    await assertRefused(merchant, withoutType, 'type');
    const { card: _card, ...withoutCard } = full;
    await assertRefused(merchant, withoutCard, 'card');
    for (const field of ['cardNo', 'expMonth', 'expYear'] as const) {
      const card: Record<string, unknown> = { ...full.card };
      delete card[field];
      await assertRefused(merchant, { type: 'card', card }, `card.${field}`);
    }
    await assertRefused(merchant, {}, 'type');
  });

  const badInputs: Array<[string, Record<string, unknown>, string]> = [
    ['a type other than card', { type: 'boleto' }, 'type'],
    ['a type that is not a string', { type: 1 }, 'type'],
    ['a card that is not an object', { card: visa }, 'card'],
    ['a card number sent as a number', { card: { ...cardBody().card, cardNo: 4242424242424242 } }, 'card.cardNo'],
    ['a card number with spaces', { card: { ...cardBody().card, cardNo: '4242 4242 4242 4242' } }, 'card.cardNo'],
    ['a card number with dashes', { card: { ...cardBody().card, cardNo: '4242-4242-4242-4242' } }, 'card.cardNo'],
    ['a card number with letters', { card: { ...cardBody().card, cardNo: '42424242424242AB' } }, 'card.cardNo'],
    ['an empty card number', { card: { ...cardBody().card, cardNo: '' } }, 'card.cardNo'],
    ['a month with a letter', { card: { ...cardBody().card, expMonth: '1a' } }, 'card.expMonth'],
    ['a month of three digits', { card: { ...cardBody().card, expMonth: '004' } }, 'card.expMonth'],
    ['a month that is a fraction', { card: { ...cardBody().card, expMonth: 1.5 } }, 'card.expMonth'],
    ['a month that is a boolean', { card: { ...cardBody().card, expMonth: true } }, 'card.expMonth'],
    // Two digits are the year's last two (docs/api.md#compatibility-with-existing-clients, test/existing-clients.test.ts); three are nothing.
    ['a three-digit year', { card: { ...cardBody().card, expYear: '203' } }, 'card.expYear'],
    ['a three-digit year as an integer', { card: { ...cardBody().card, expYear: 203 } }, 'card.expYear'],
    ['a year with a letter', { card: { ...cardBody().card, expYear: '203O' } }, 'card.expYear'],
    ['a security code of two digits', { card: { ...cardBody().card, securityCode: '12' } }, 'card.securityCode'],
    ['a security code of five digits', { card: { ...cardBody().card, securityCode: '12345' } }, 'card.securityCode'],
    ['a security code sent as a number', { card: { ...cardBody().card, securityCode: 123 } }, 'card.securityCode'],
    ['a security code with letters', { card: { ...cardBody().card, securityCode: '12a' } }, 'card.securityCode'],
    ['an unknown card field', { card: { ...cardBody().card, holderName: 'Ana' } }, 'card.holderName'],
    ['billing details that are not an object', { billingDetails: 'Ana Silva' }, 'billingDetails'],
    ['a malformed billing email', { billingDetails: { email: 'ana-at-example' } }, 'billingDetails.email'],
    ['a malformed billing phone', { billingDetails: { phone: 'call me' } }, 'billingDetails.phone'],
    ['an empty billing firstName', { billingDetails: { firstName: '' } }, 'billingDetails.firstName'],
    [
      'a billing lastName over 100 characters',
      { billingDetails: { lastName: 'x'.repeat(101) } },
      'billingDetails.lastName',
    ],
    [
      'a billing description over 500 characters',
      { billingDetails: { description: 'x'.repeat(501) } },
      'billingDetails.description',
    ],
    [
      'a malformed billing country',
      { billingDetails: { address: { country: 'USA' } } },
      'billingDetails.address.country',
    ],
    [
      'a billing city that is not a string',
      { billingDetails: { address: { city: 5 } } },
      'billingDetails.address.city',
    ],
    [
      'an unknown billing address field',
      { billingDetails: { address: { zip: '1000' } } },
      'billingDetails.address.zip',
    ],
    ['an unknown billing field', { billingDetails: { company: 'ACME' } }, 'billingDetails.company'],
    ['a merchantPaySite that is not http(s)', { merchantPaySite: 'ftp://shop.example.com' }, 'merchantPaySite'],
    ['a merchantPaySite that is not a URL', { merchantPaySite: 'my shop' }, 'merchantPaySite'],
    ['a merchantPaySite that is not a string', { merchantPaySite: 42 }, 'merchantPaySite'],
    ['an unknown field', { customerId: 'cus_1000000000000000000' }, 'customerId'],
  ];
  for (const [what, change, param] of badInputs) {
    test(`refuses ${what} with 400 naming ${param}`, async () => {
      const merchant = await ctx.merchant();
      await assertRefused(merchant, { ...cardBody(), ...change }, param);
    });
  }

  test('refuses a public-key request for anything but creating and reading a payment method', async () => {
    const merchant = await ctx.merchant();
    const publicKey = { authorization: `Bearer ${merchant.publicKey}` };
    const created = await merchant.call('POST', '/payment_methods/create', cardBody(), publicKey);
    assert.equal(created.status, 200, created.raw);
    assert.ok(!created.raw.includes(visa));
    const id = created.body.data.id;
    const customer = await createCustomer(merchant);
    // docs/api.md#responses: the customer's page reads back what it created (test/existing-clients.test.ts).
    const read = await merchant.call('GET', `/payment_methods/${id}`, undefined, publicKey);
    assert.equal(read.status, 200, read.raw);
    assert.ok(!read.raw.includes(visa));
    for (const [method, path, body] of [
      ['GET', `/payment_methods/list/${customer.id}`, undefined],
      ['POST', `/payment_methods/${id}/attach`, { customerId: customer.id }],
      ['POST', `/payment_methods/${id}/update`, { merchantPaySite: 'https://evil.example.com' }],
      ['POST', `/payment_methods/${id}/detach`, {}],
    ] as const) {
      const response = await merchant.call(method, path, body, publicKey);
      assert.equal(response.status, 403, `${method} ${path}`);
      assert.equal(response.body.code, 'permission_denied');
    }
    const retrieved = await merchant.call('GET', `/payment_methods/${id}`);
    assert.equal(retrieved.status, 200);
    assert.equal(retrieved.body.data.customerId, null);
    assert.equal(retrieved.body.data.merchantPaySite, null);
  });

  test('refuses a request without a key', async () => {
    const response = await injectRaw(ctx, {
      method: 'POST',
      url: '/api/services/v1/payment_methods/create',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(cardBody()),
    });
    assert.equal(response.statusCode, 401);
    assert.equal(response.json().code, 'authentication_error');
    assert.ok(!response.body.includes(visa));
  });

  test('replays a create with the same Idempotency-Key and stores one payment method', async () => {
    const merchant = await ctx.merchant();
    const customer = await createCustomer(merchant);
    const headers = { 'idempotency-key': 'pm-create-1' };
    const first = await merchant.call('POST', '/payment_methods/create', cardBody(), headers);
    const second = await merchant.call('POST', '/payment_methods/create', cardBody(), headers);
    assert.equal(second.raw, first.raw);
    assert.equal(second.headers['idempotent-replayed'], 'true');
    assert.ok(!second.raw.includes(visa));
    const [count] = await ctx.tessera.db.query<{ count: string }>(
      'SELECT count(*)::text AS count FROM payment_methods WHERE merchant_id = $1',
      [merchant.id],
    );
    assert.equal(count?.count, '1');
    assert.ok(customer.id);
  });

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
    assert.ok(!(await storedRow(method.id)).includes('4895370012003478'), 'the network token is encrypted');
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
      const text = await storedRow(method.id);
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
