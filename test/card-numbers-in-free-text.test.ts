import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { containsCardNumber, maskCardNumbersInText } from '../src/card-numbers.js';
import {
  databaseKind,
  injectRaw,
  startTestApp,
  type ApiResponse,
  type TestContext,
  type TestMerchant,
} from './helpers/harness.js';
import { signedInOwner } from './helpers/dashboard.js';

const visa = '4242424242424242';
const typedForms = [
  visa,
  '4242 4242 4242 4242',
  '4242-4242-4242-4242',
  '5555 5555 5555 4444',
  '378282246310005',
] as const;
/** Every digit of the refused number, in any of the forms above: what no answer may hold. */
const anyForm = /4242[ -]?4242[ -]?4242[ -]?4242|5555[ -]?5555[ -]?5555[ -]?4444|378282246310005/;

describe('finding a card number in text (docs/decisions/0045-card-numbers-in-free-text.md)', () => {
  test('finds a brand-prefixed, Luhn-valid 13-19 digit number, with or without spaces or dashes', () => {
    for (const text of typedForms) assert.ok(containsCardNumber(`card: ${text}, thanks`), text);
    assert.ok(containsCardNumber('4242 4242 4242 4242 123'), 'a number followed by its security code');
    assert.ok(containsCardNumber('6011111111111117'), 'Discover');
    assert.ok(containsCardNumber('3566002020360505'), 'JCB');
  });

  test('leaves phone numbers, ids, references and numbers that fail Luhn or have no brand prefix', () => {
    for (const text of [
      '+1 415 555 0100',
      '4242424242424241',
      '1234567812345670',
      '9999999999999995',
      'pt_4242424242424242000',
      'ORDER4242424242424242',
      '424242424242',
      '42424242424242424242424',
      'Flat 12, 4242 Main Street',
    ]) {
      assert.equal(containsCardNumber(text), false, text);
    }
  });

  test('masks each number down to its last four digits', () => {
    assert.equal(maskCardNumbersInText('a 4242 4242 4242 4242 b 5555-5555-5555-4444'), 'a •••• 4242 b •••• 4444');
    assert.equal(maskCardNumbersInText('nothing here'), 'nothing here');
  });
});

describe(`the card-number guard on free text (${databaseKind})`, () => {
  let ctx: TestContext;
  let shop: TestMerchant;
  let paymentMethod: string;
  let paymentId: string;
  let customerId: string;

  before(async () => {
    ctx = await startTestApp();
    shop = await ctx.merchant();
    const method = await shop.call('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo: visa, expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    assert.equal(method.status, 200, method.raw);
    paymentMethod = method.body.data.id;
    const payment = await shop.call('POST', '/payment/create', {
      amount: '1000',
      currency: 'USD',
      paymentMethod,
      confirm: true,
    });
    assert.equal(payment.status, 200, payment.raw);
    paymentId = payment.body.data.id;
    const customer = await shop.call('POST', '/customers/create', { email: 'ada@example.com' });
    customerId = customer.body.data.id;
  });
  after(() => ctx.close());

  function assertRefused(response: ApiResponse, param: string) {
    assert.equal(response.status, 400, response.raw);
    assert.equal(response.body.code, 'invalid_request', response.raw);
    assert.equal(response.body.data?.param, param, response.raw);
    assert.equal(
      response.body.msg,
      `${param} looks like it contains a card number; send card numbers only in card.cardNo`,
    );
    assert.doesNotMatch(response.raw, anyForm, 'the refusal never shows the number');
  }

  const count = async (path: string) => (await shop.call('GET', `${path}?limit=100`)).body.data.data.length;

  test('refuses a card number in every free-text field of a payment, naming the field; nothing is written', async () => {
    const before = await count('/payment');
    const base = { amount: '1000', currency: 'USD', paymentMethod };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ description: `Order for ${typedForms[1]}` }, 'description'],
      [{ lineItems: [{ name: 'Hat' }, { name: typedForms[2] }] }, 'lineItems[1].name'],
      [{ lineItems: [{ name: 'Hat', description: typedForms[3] }] }, 'lineItems[0].description'],
      [{ shipping: { firstName: 'Ada', address: { line1: typedForms[0] } } }, 'shipping.address.line1'],
      [{ statementDescriptor: visa }, 'statementDescriptor'],
    ];
    for (const [fields, param] of cases) {
      const response = await shop.call('POST', '/payment/create', { ...base, ...fields });
      assertRefused(response, param);
    }
    assert.equal(await count('/payment'), before);
  });

  test('refuses one in customer names, addresses and billing details', async () => {
    const before = await count('/customers');
    assertRefused(await shop.call('POST', '/customers/create', { firstName: typedForms[1] }), 'firstName');
    assertRefused(
      await shop.call('POST', '/customers/create', { address: { line2: `Apt ${typedForms[2]}` } }),
      'address.line2',
    );
    assertRefused(await shop.call('POST', '/customers/create', { description: visa }), 'description');
    assert.equal(await count('/customers'), before);
    assertRefused(await shop.call('POST', `/customers/${customerId}/update`, { lastName: typedForms[0] }), 'lastName');
    assertRefused(
      await shop.call('POST', '/payment_methods/create', {
        type: 'card',
        card: { cardNo: visa, expMonth: '12', expYear: '2030', securityCode: '123' },
        billingDetails: { firstName: typedForms[1] },
      }),
      'billingDetails.firstName',
    );
  });

  test('refuses one in refund notes, descriptions and metadata, a number-typed description included', async () => {
    assertRefused(
      await shop.call('POST', '/refunds/create', { paymentId, amount: '100', metadata: { note: typedForms[4] } }),
      'metadata.note',
    );
    assertRefused(
      await shop.call('POST', '/refunds/create', { paymentId, amount: '100', metadata: { [visa]: 'x' } }),
      'metadata',
    );
    assertRefused(
      await shop.call('POST', '/refunds/create', { paymentId, amount: '100', reason: 'other', note: typedForms[2] }),
      'note',
    );
    assertRefused(
      await shop.call('POST', '/refunds/create', { paymentId, amount: '100', description: Number(visa) }),
      'description',
    );
    assert.equal((await shop.call('GET', `/refunds?paymentId=${paymentId}`)).body.data.data.length, 0);
  });

  test('refuses one in invoice lines and checkout line items', async () => {
    assertRefused(
      await shop.call('POST', '/invoices/create', {
        customerId,
        currency: 'usd',
        collectionMethod: 'send_invoice',
        daysUntilDue: 14,
        lineItems: [{ description: `Card ${typedForms[1]}`, amount: '500' }],
      }),
      'lineItems[0].description',
    );
    assertRefused(
      await shop.call('POST', '/checkout/session/create', {
        amountTotal: '1000',
        currency: 'USD',
        returnUrl: 'https://shop.example/done',
        lineItems: [{ name: typedForms[3] }],
      }),
      'lineItems[0].name',
    );
  });

  test('takes a card-like orderNo and merchantUserId: identifiers the merchant owns', async () => {
    const payment = await shop.call('POST', '/payment/create', {
      amount: '1000',
      currency: 'USD',
      paymentMethod,
      orderNo: '4111111111111111',
    });
    assert.equal(payment.status, 200, payment.raw);
    const numeric = await shop.call('POST', '/payment/create', {
      amount: '1000',
      currency: 'USD',
      paymentMethod,
      orderNo: 4012888888881881,
    });
    assert.equal(numeric.status, 200, numeric.raw);
    const customer = await shop.call('POST', '/customers/create', { merchantUserId: '5105105105105100' });
    assert.equal(customer.status, 200, customer.raw);
    // The card field itself is not free text.
    assert.equal(paymentMethod.startsWith('pm_'), true);
  });

  test("the dashboard's refund form refuses one and does not show it again", async () => {
    const owner = await signedInOwner(ctx, shop.id, 'owner-guard@example.com', 'a long enough password 1');
    const refused = await owner.post(`/dashboard/payments/${paymentId}/refund`, {
      amount: '1.00',
      reason: 'other',
      note: typedForms[1],
    });
    assert.equal(refused.status, 400);
    assert.match(refused.body, /note looks like it contains a card number; send card numbers only in card\.cardNo/);
    assert.doesNotMatch(refused.body, anyForm);
    assert.equal((await shop.call('GET', `/refunds?paymentId=${paymentId}`)).body.data.data.length, 0);
  });

  test('the hosted checkout refuses one typed as the name on the card and does not show it again', async () => {
    const session = await shop.call('POST', '/checkout/session/create', {
      amountTotal: '1000',
      currency: 'USD',
      returnUrl: 'https://shop.example/done',
    });
    assert.equal(session.status, 200, session.raw);
    const id = session.body.data.id as string;
    const refused = await injectRaw(ctx, {
      method: 'POST',
      url: `/checkout/${id}/pay`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        cardNo: '4000056655665556',
        expiry: '12/30',
        securityCode: '123',
        name: typedForms[1],
      }).toString(),
    });
    assert.equal(refused.statusCode, 400);
    assert.match(refused.body, /id="name-error"/);
    assert.doesNotMatch(refused.body, anyForm);
    assert.equal((await shop.call('GET', `/checkout/session/${id}`)).body.data.status, 'open');
  });
});
