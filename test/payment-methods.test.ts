import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { databaseKind, injectRaw, startTestApp, type TestContext } from './helpers/harness.js';
import { assertRefused, cardBody, createCustomer, createMethod, storedRow, visa } from './helpers/payment-methods.js';

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

describe(`payment methods (${databaseKind})`, () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await startTestApp();
  });
  after(() => ctx.close());

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
    const text = await storedRow(ctx, method.id);
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
});
