import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkCard, checkExpiry, type CardBrand, type CardCheck } from '../src/payment-methods/card.js';

/** A fixed "now" so that expiry rules do not drift with the calendar: 15 June 2026, UTC. */
const now = new Date('2026-06-15T12:00:00.000Z');

/** docs/api.md#sandbox-test-cards: every sandbox test card and its brand. */
const sandboxCards: Array<[number: string, brand: CardBrand]> = [
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
const amex = '378282246310005';

function check(card: Partial<Parameters<typeof checkCard>[0]> = {}): CardCheck {
  return checkCard({ cardNo: visa, expMonth: '04', expYear: '2030', securityCode: '123', ...card }, now);
}

/** Asserts a refusal naming `param`, and that its message carries no run of the number's or code's digits. */
function assertRefused(result: CardCheck, param: string, secrets: string[]): void {
  assert.equal(result.ok, false, `expected a refusal naming ${param}`);
  if (result.ok) return;
  assert.equal(result.param, param);
  assert.ok(result.message.startsWith(param), `the message names the field: ${result.message}`);
  for (const secret of secrets) {
    assert.ok(!result.message.includes(secret), 'the message contains the secret');
    // Not even the last four digits, nor any four-digit run of it, may appear.
    for (let start = 0; start + 4 <= secret.length; start += 1) {
      assert.ok(!result.message.includes(secret.slice(start, start + 4)), 'the message contains part of the secret');
    }
  }
}

/** Makes a number of `length` digits that starts with `prefix` and passes the Luhn check. */
function luhnNumber(prefix: string, length: number): string {
  const body = prefix.padEnd(length - 1, '0');
  let sum = 0;
  for (let index = 0; index < body.length; index += 1) {
    // The check digit goes to the right, so the body's rightmost digit is doubled.
    let value = Number(body[body.length - 1 - index]);
    if (index % 2 === 0) {
      value *= 2;
      if (value > 9) value -= 9;
    }
    sum += value;
  }
  return body + String((10 - (sum % 10)) % 10);
}

describe('checkCard', () => {
  for (const [number, brand] of sandboxCards) {
    test(`accepts the sandbox card ending ${number.slice(-4)} as ${brand}`, () => {
      const securityCode = brand === 'amex' ? '1234' : '123';
      const result = checkCard({ cardNo: number, expMonth: '4', expYear: '2030', securityCode }, now);
      assert.ok(result.ok, result.ok ? '' : result.message);
      assert.deepEqual(result.card, {
        number,
        brand,
        last4: number.slice(-4),
        expMonth: '04',
        expYear: '2030',
        securityCode,
        country: result.card.country,
      });
      assert.match(result.card.country, /^[A-Z]{2}$/);
    });
  }

  test('answers US as the country of a card the BIN table does not know', () => {
    const result = check();
    assert.ok(result.ok);
    assert.equal(result.card.country, 'US');
  });

  test('refuses a number that fails the Luhn check without quoting it', () => {
    const number = '4242424242424241';
    const result = check({ cardNo: number });
    assertRefused(result, 'card.cardNo', [number]);
    assert.match(result.ok ? '' : result.message, /Luhn/);
  });

  test('refuses a number of the wrong length for its brand', () => {
    const wrongLengths: Array<[prefix: string, length: number]> = [
      ['4', 15], // Visa: 13, 16 or 19
      ['4', 18],
      ['51', 15], // Mastercard: 16 only
      ['2221', 19],
      ['34', 16], // Amex: 15 only
      ['37', 14],
      ['6011', 15], // Discover: 16 to 19
      ['3528', 15], // JCB: 16 to 19
      ['36', 13], // Diners: 14 to 19
      ['62', 15], // UnionPay: 16 to 19
    ];
    for (const [prefix, length] of wrongLengths) {
      const number = luhnNumber(prefix, length);
      assert.equal(number.length, length);
      const result = check({ cardNo: number, securityCode: null });
      assertRefused(result, 'card.cardNo', [number]);
      assert.match(result.ok ? '' : result.message, /digits for a/);
    }
  });

  test('accepts every length each brand issues', () => {
    const goodLengths: Array<[prefix: string, length: number, brand: CardBrand]> = [
      ['4', 13, 'visa'],
      ['4', 19, 'visa'],
      ['2720', 16, 'mastercard'],
      ['55', 16, 'mastercard'],
      ['644', 19, 'discover'],
      ['65', 16, 'discover'],
      ['622126', 16, 'discover'],
      ['622925', 16, 'discover'],
      ['3589', 19, 'jcb'],
      ['300', 14, 'diners'],
      ['39', 19, 'diners'],
      ['62', 16, 'unionpay'],
      ['622125', 19, 'unionpay'],
      ['622926', 16, 'unionpay'],
    ];
    for (const [prefix, length, brand] of goodLengths) {
      const number = luhnNumber(prefix, length);
      const result = check({ cardNo: number, securityCode: null });
      assert.ok(result.ok, `${prefix}… of ${length} digits: ${result.ok ? '' : result.message}`);
      assert.equal(result.card.brand, brand, `${prefix}… of ${length} digits`);
    }
  });

  test('refuses a number of no supported brand', () => {
    for (const prefix of ['1', '9', '2220', '2721', '56', '306', '35', '3527', '3590', '60', '643']) {
      const number = luhnNumber(prefix, 16);
      const result = check({ cardNo: number, securityCode: null });
      assertRefused(result, 'card.cardNo', [number]);
      assert.equal(result.ok ? '' : result.message, 'card.cardNo is not a supported card brand');
    }
  });

  test('refuses month 00, 0 and 13 naming card.expMonth', () => {
    for (const expMonth of ['00', '0', '13']) assertRefused(check({ expMonth }), 'card.expMonth', [visa, '123']);
  });

  test('normalizes a one-digit month to two digits, and takes integers from older clients', () => {
    const one = check({ expMonth: '1' });
    assert.ok(one.ok);
    assert.equal(one.card.expMonth, '01');
    const integers = check({ expMonth: 9, expYear: 2031 });
    assert.ok(integers.ok);
    assert.equal(integers.card.expMonth, '09');
    assert.equal(integers.card.expYear, '2031');
  });

  test('refuses an expiry in the past, blaming the year when the year is past and else the month', () => {
    assertRefused(check({ expMonth: '12', expYear: '2025' }), 'card.expYear', [visa]);
    assertRefused(check({ expMonth: '05', expYear: '2026' }), 'card.expMonth', [visa]);
  });

  test('keeps a card valid through the last moment of its expiry month in UTC', () => {
    const lastMoment = new Date('2026-06-30T23:59:59.999Z');
    assert.ok(checkCard({ cardNo: visa, expMonth: '06', expYear: '2026' }, lastMoment).ok);
    const nextMonth = new Date('2026-07-01T00:00:00.000Z');
    assertRefused(checkCard({ cardNo: visa, expMonth: '06', expYear: '2026' }, nextMonth), 'card.expMonth', [visa]);
  });

  test('refuses an expiry year more than 20 years ahead', () => {
    assert.ok(check({ expYear: '2046' }).ok);
    assertRefused(check({ expYear: '2047' }), 'card.expYear', [visa]);
  });

  test('refuses a 3-digit code for American Express and accepts a 4-digit one', () => {
    assertRefused(check({ cardNo: amex, securityCode: '123' }), 'card.securityCode', [amex, '123']);
    const accepted = check({ cardNo: amex, securityCode: '1234' });
    assert.ok(accepted.ok);
    assert.equal(accepted.card.securityCode, '1234');
  });

  test('refuses a 4-digit code for Visa without quoting it', () => {
    const result = check({ securityCode: '9876' });
    assertRefused(result, 'card.securityCode', [visa, '9876']);
  });

  test('accepts a card without a security code', () => {
    const result = check({ securityCode: undefined });
    assert.ok(result.ok);
    assert.equal(result.card.securityCode, null);
  });
});

describe('checkExpiry', () => {
  test('normalizes a valid expiry', () => {
    assert.deepEqual(checkExpiry('7', '2027', now), { ok: true, expMonth: '07', expYear: '2027' });
    assert.deepEqual(checkExpiry('06', '2026', now), { ok: true, expMonth: '06', expYear: '2026' });
  });

  test('names the field it refuses', () => {
    assert.equal((checkExpiry('13', '2027', now) as { param: string }).param, 'card.expMonth');
    assert.equal((checkExpiry('12', '2025', now) as { param: string }).param, 'card.expYear');
    assert.equal((checkExpiry('01', '2026', now) as { param: string }).param, 'card.expMonth');
    assert.equal((checkExpiry('01', '2099', now) as { param: string }).param, 'card.expYear');
  });
});
