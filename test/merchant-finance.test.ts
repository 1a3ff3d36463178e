/**
 * The operator's settings of a merchant's money (docs/balances.md): fees, availability, payout
 * schedule and bank account, checked and applied to the ledger.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { databaseKind, injectRaw, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';

const dayMs = 24 * 60 * 60 * 1000;

describe(`merchant finance settings (${databaseKind})`, () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await startTestApp();
  });
  after(() => ctx.close());

  async function operator(method: 'GET' | 'POST', path: string, body?: unknown) {
    const response = await injectRaw(ctx, {
      method,
      url: `/admin/v1${path}`,
      headers: {
        authorization: `Bearer ${ctx.operatorKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    return { status: response.statusCode, body: response.json(), raw: response.body };
  }

  async function pay(merchant: TestMerchant, amount: string, currency = 'USD') {
    const method = await merchant.call('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    const payment = await merchant.call('POST', '/payment/create', {
      amount,
      currency,
      paymentMethod: method.body.data.id,
      confirm: true,
    });
    assert.equal(payment.status, 200, payment.raw);
    const entries = await merchant.call('GET', `/balance_transactions?source=${payment.body.data.id}`);
    return entries.body.data.data[0] as Record<string, any>;
  }

  const usdAccount = {
    holderName: 'Example Shop LLC',
    accountNumber: '000123456789',
    routingNumber: '110000000',
    currency: 'USD',
  };

  test('a new merchant has the defaults: 290 bp + 30, 2 days, daily payouts, no bank account', async () => {
    const merchant = await ctx.merchant();
    const answer = await operator('GET', `/merchants/${merchant.id}`);
    assert.equal(answer.status, 200, answer.raw);
    const { fees, availabilityDays, payoutSchedule, bankAccounts } = answer.body.data;
    assert.deepEqual(
      { fees, availabilityDays, payoutSchedule, bankAccounts },
      {
        fees: { percentBasisPoints: 290, fixed: {} },
        availabilityDays: 2,
        payoutSchedule: { interval: 'daily', weeklyAnchor: null, monthlyAnchor: null },
        bankAccounts: [],
      },
    );
  });

  test('the operator sets fees, availability, schedule and bank account; later payments follow them', async () => {
    const merchant = await ctx.merchant();
    const answer = await operator('POST', `/merchants/${merchant.id}/update`, {
      fees: { percentBasisPoints: 150, fixed: { usd: 10, EUR: 25 } },
      availabilityDays: 0,
      payoutSchedule: { interval: 'weekly', weeklyAnchor: 'friday' },
      bankAccount: usdAccount,
    });
    assert.equal(answer.status, 200, answer.raw);
    assert.deepEqual(answer.body.data.fees, { percentBasisPoints: 150, fixed: { USD: 10, EUR: 25 } });
    assert.equal(answer.body.data.availabilityDays, 0);
    assert.deepEqual(answer.body.data.payoutSchedule, {
      interval: 'weekly',
      weeklyAnchor: 'friday',
      monthlyAnchor: null,
    });
    assert.deepEqual(answer.body.data.bankAccounts, [
      {
        holderName: 'Example Shop LLC',
        accountNumberLast4: '6789',
        routingNumber: '110000000',
        ibanLast4: null,
        currency: 'USD',
      },
    ]);
    assert.ok(!answer.raw.includes('000123456789'), 'the account number is never shown again');

    // 1.5 % of 1000 = 15, + 10; available at once.
    const usd = await pay(merchant, '1000');
    assert.equal(usd.fee, '25');
    assert.equal(usd.status, 'available');
    assert.equal(usd.availableOn, usd.created);
    // GBP is not listed: it pays the default fixed part, 30.
    const gbp = await pay(merchant, '1000', 'GBP');
    assert.equal(gbp.fee, '45');

    // Changing the schedule keeps the rest.
    const later = await operator('POST', `/merchants/${merchant.id}/update`, { availabilityDays: 7 });
    assert.equal(later.status, 200, later.raw);
    assert.equal(later.body.data.fees.percentBasisPoints, 150);
    assert.equal(later.body.data.bankAccounts[0].accountNumberLast4, '6789');
    const week = await pay(merchant, '1000');
    assert.equal(Date.parse(week.availableOn) - Date.parse(week.created), 7 * dayMs);
  });

  test('an IBAN account is checked by mod-97 and shown by its last four characters', async () => {
    const merchant = await ctx.merchant();
    const answer = await operator('POST', `/merchants/${merchant.id}/update`, {
      bankAccount: {
        holderName: 'Beispiel GmbH',
        accountNumber: '0532013000',
        iban: 'DE89 3704 0044 0532 0130 00',
        currency: 'EUR',
      },
    });
    assert.equal(answer.status, 200, answer.raw);
    assert.equal(answer.body.data.bankAccounts[0].ibanLast4, '3000');
    assert.ok(!answer.raw.includes('DE89370400440532013000'));

    // docs/balances.md, Bank accounts: one per currency; a USD account is added beside it, and a
    // second EUR account replaces the first.
    await operator('POST', `/merchants/${merchant.id}/update`, { bankAccount: usdAccount });
    const replaced = await operator('POST', `/merchants/${merchant.id}/update`, {
      bankAccount: {
        holderName: 'Beispiel GmbH',
        accountNumber: '0532013999',
        iban: 'DE89 3704 0044 0532 0130 00',
        currency: 'eur',
      },
    });
    assert.equal(replaced.status, 200, replaced.raw);
    assert.deepEqual(
      replaced.body.data.bankAccounts.map((row: { currency: string; accountNumberLast4: string }) => [
        row.currency,
        row.accountNumberLast4,
      ]),
      [
        ['EUR', '3999'],
        ['USD', '6789'],
      ],
    );
  });

  test('bad settings are refused with 400 naming the field and the rule, and nothing is written', async () => {
    const merchant = await ctx.merchant();
    const cases: Array<[unknown, string, string]> = [
      [{ bankAccount: { ...usdAccount, routingNumber: '110000001' } }, 'bankAccount.routingNumber', 'routing_checksum'],
      [{ bankAccount: { ...usdAccount, routingNumber: '11000000' } }, 'bankAccount.routingNumber', 'pattern'],
      [
        {
          bankAccount: {
            ...usdAccount,
            routingNumber: undefined,
            iban: 'DE88 3704 0044 0532 0130 00',
            currency: 'EUR',
          },
        },
        'bankAccount.iban',
        'iban_checksum',
      ],
      [{ bankAccount: { ...usdAccount, routingNumber: undefined } }, 'bankAccount.routingNumber', 'required'],
      [{ bankAccount: { ...usdAccount, currency: 'XYZ' } }, 'bankAccount.currency', 'currency'],
      [{ bankAccount: { ...usdAccount, accountNumber: '12ab' } }, 'bankAccount.accountNumber', 'pattern'],
      [{ fees: { percentBasisPoints: 10001 } }, 'fees.percentBasisPoints', 'maximum'],
      [{ fees: { fixed: { XYZ: 10 } } }, 'fees.fixed.XYZ', 'currency'],
      [{ availabilityDays: -1 }, 'availabilityDays', 'minimum'],
      [{ payoutSchedule: { interval: 'weekly' } }, 'payoutSchedule.weeklyAnchor', 'required'],
      [{ payoutSchedule: { interval: 'daily', monthlyAnchor: 3 } }, 'payoutSchedule.monthlyAnchor', 'interval'],
      [{ payoutSchedule: { interval: 'hourly' } }, 'payoutSchedule.interval', 'enum'],
    ];
    for (const [body, param, rule] of cases) {
      // The name changes too: a refusal must leave it as it was.
      const answer = await operator('POST', `/merchants/${merchant.id}/update`, {
        name: 'Renamed',
        ...(body as object),
      });
      assert.equal(answer.status, 400, `${JSON.stringify(body)}: ${answer.raw}`);
      assert.equal(answer.body.code, 'invalid_request', answer.raw);
      assert.equal(answer.body.data.param, param, answer.raw);
      assert.equal(answer.body.data.rule, rule, answer.raw);
    }
    const current = await operator('GET', `/merchants/${merchant.id}`);
    assert.equal(current.body.data.name, 'Test merchant');
    assert.deepEqual(current.body.data.bankAccounts, []);
    assert.equal(current.body.data.fees.percentBasisPoints, 290);
  });
});
