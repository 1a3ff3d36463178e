export type CardBrand = 'visa' | 'mastercard' | 'amex' | 'discover' | 'jcb' | 'diners' | 'unionpay';

export interface ValidCard {
  number: string;
  brand: CardBrand;
  last4: string;
  /** Always two digits, "01" to "12". */
  expMonth: string;
  /** Four digits. */
  expYear: string;
  securityCode: string | null;
  /** ISO 3166 alpha-2; the sandbox knows it from a small BIN table and defaults to US. */
  country: string;
}

export type CardRefusal = { ok: false; param: string; message: string };
export type CardCheck = { ok: true; card: ValidCard } | CardRefusal;
export type ExpiryCheck = { ok: true; expMonth: string; expYear: string } | CardRefusal;

export interface CardInput {
  cardNo: string;
  // Existing clients send the month and year as integers too (docs/api.md#payment-methods writes strings), so both are taken.
  expMonth: string | number;
  expYear: string | number;
  securityCode?: string | null;
}

/** A card is accepted up to this many years after the current one; further is a typo, not a card. */
const maxYearsAhead = 20;

/** Card lengths each brand issues. */
const lengthsByBrand: Record<CardBrand, readonly number[]> = {
  visa: [13, 16, 19],
  mastercard: [16],
  amex: [15],
  discover: [16, 17, 18, 19],
  jcb: [16, 17, 18, 19],
  diners: [14, 15, 16, 17, 18, 19],
  unionpay: [16, 17, 18, 19],
};

const brandNames: Record<CardBrand, string> = {
  visa: 'Visa',
  mastercard: 'Mastercard',
  amex: 'American Express',
  discover: 'Discover',
  jcb: 'JCB',
  diners: 'Diners Club',
  unionpay: 'UnionPay',
};

/**
 * The sandbox's stand-in for an issuer BIN database: a few prefixes whose country is known, the
 * longest match wins. Real connectors answer the country from the acquirer's BIN data.
 */
const countryByBin: ReadonlyArray<readonly [prefix: string, country: string]> = [
  ['4000000760', 'BR'],
  ['4000001240', 'CA'],
  ['4000002760', 'DE'],
  ['4000003920', 'JP'],
  ['4000008260', 'GB'],
  ['35', 'JP'],
  ['62', 'CN'],
];
const defaultCountry = 'US';

/**
 * Validates a card as a payment method is created: brand by IIN, length for the brand, Luhn,
 * expiry and security code. Refusals name the field and the rule and never contain any digit
 * of the card number or security code, since they are answered to the client and may be logged.
 */
export function checkCard(input: CardInput, now: Date): CardCheck {
  const number = input.cardNo;
  if (!/^\d{12,19}$/.test(number)) {
    return refuse('card.cardNo', 'card.cardNo must be a string of 12 to 19 digits');
  }
  const brand = detectBrand(number);
  if (brand === null) return refuse('card.cardNo', 'card.cardNo is not a supported card brand');
  const lengths = lengthsByBrand[brand];
  if (!lengths.includes(number.length)) {
    return refuse(
      'card.cardNo',
      `card.cardNo must have ${describeLengths(lengths)} digits for a ${brandNames[brand]} card`,
    );
  }
  if (!passesLuhn(number)) return refuse('card.cardNo', 'card.cardNo must pass the Luhn check');

  const expiry = checkExpiry(input.expMonth, input.expYear, now);
  if (!expiry.ok) return expiry;

  const securityCode = input.securityCode ?? null;
  if (securityCode !== null) {
    const expectedLength = brand === 'amex' ? 4 : 3;
    if (!/^\d+$/.test(securityCode) || securityCode.length !== expectedLength) {
      return refuse(
        'card.securityCode',
        `card.securityCode must be ${expectedLength} digits for a ${brandNames[brand]} card`,
      );
    }
  }

  return {
    ok: true,
    card: {
      number,
      brand,
      last4: number.slice(-4),
      expMonth: expiry.expMonth,
      expYear: expiry.expYear,
      securityCode,
      country: countryOf(number),
    },
  };
}

/**
 * Validates and normalizes an expiry date. A card is valid through the last day of its expiry
 * month, in UTC; an expiry in the past is blamed on the year when the year itself is past,
 * otherwise on the month.
 */
export function checkExpiry(expMonth: string | number, expYear: string | number, now: Date): ExpiryCheck {
  const monthText = String(expMonth);
  if (!/^\d{1,2}$/.test(monthText)) return refuse('card.expMonth', 'card.expMonth must be a month from 01 to 12');
  const month = Number(monthText);
  if (month < 1 || month > 12) return refuse('card.expMonth', 'card.expMonth must be a month from 01 to 12');

  // docs/api.md#compatibility-with-existing-clients: card forms send the year's last two digits; "30" is 2030.
  const givenYear = String(expYear);
  const yearText = /^\d{2}$/.test(givenYear) ? `20${givenYear}` : givenYear;
  if (!/^\d{4}$/.test(yearText)) {
    return refuse('card.expYear', 'card.expYear must be a four-digit year (or its last two digits)');
  }
  const year = Number(yearText);

  const currentYear = now.getUTCFullYear();
  const currentMonth = now.getUTCMonth() + 1;
  if (year < currentYear) return refuse('card.expYear', 'card.expYear must not be in the past');
  if (year === currentYear && month < currentMonth) {
    return refuse('card.expMonth', 'card.expMonth must not be in the past: the card has expired');
  }
  if (year > currentYear + maxYearsAhead) {
    return refuse('card.expYear', `card.expYear must be at most ${maxYearsAhead} years from now`);
  }
  return { ok: true, expMonth: String(month).padStart(2, '0'), expYear: yearText };
}

/** The brand whose IIN range holds the number, or null when none does. */
export function detectBrand(number: string): CardBrand | null {
  const prefix = (length: number) => Number(number.slice(0, length));
  const within = (length: number, low: number, high: number) => {
    const value = prefix(length);
    return value >= low && value <= high;
  };
  if (number.startsWith('4')) return 'visa';
  if (within(2, 51, 55) || within(4, 2221, 2720)) return 'mastercard';
  if (within(2, 34, 34) || within(2, 37, 37)) return 'amex';
  // Discover's co-branded range sits inside UnionPay's 62, so it is tested first.
  if (within(4, 6011, 6011) || within(3, 644, 649) || within(2, 65, 65) || within(6, 622126, 622925)) {
    return 'discover';
  }
  if (within(4, 3528, 3589)) return 'jcb';
  if (within(2, 36, 36) || within(3, 300, 305) || within(2, 38, 39)) return 'diners';
  if (within(2, 62, 62)) return 'unionpay';
  return null;
}

/** The Luhn (mod 10) check digit test every card number passes. */
export function passesLuhn(number: string): boolean {
  let sum = 0;
  for (let index = 0; index < number.length; index += 1) {
    let digit = Number(number[number.length - 1 - index]);
    if (index % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

function countryOf(number: string): string {
  let best: { prefix: string; country: string } | null = null;
  for (const [prefix, country] of countryByBin) {
    if (number.startsWith(prefix) && (best === null || prefix.length > best.prefix.length)) best = { prefix, country };
  }
  return best?.country ?? defaultCountry;
}

function describeLengths(lengths: readonly number[]): string {
  const first = lengths[0];
  const last = lengths[lengths.length - 1];
  const contiguous = lengths.every((length, index) => length === (first ?? 0) + index);
  if (lengths.length === 1) return String(first);
  if (contiguous && lengths.length > 2) return `${first} to ${last}`;
  return `${lengths.slice(0, -1).join(', ')} or ${last}`;
}

function refuse(param: string, message: string): CardRefusal {
  return { ok: false, param, message };
}
