/**
 * Finding a card number in free text (docs/decisions/0045-card-numbers-in-free-text.md): a run of
 * 13 to 19 digits, in groups split by single spaces or dashes, that starts with a card brand's
 * prefix and passes the Luhn check. The rule is narrower than the log mask's (src/redact.ts), which
 * hides any 12-19 digit run, because a match here refuses a request: a phone number or a parcel
 * number must still get through.
 */

/**
 * A cheap first look: no 13 digits in a row (separators aside) after something other than a
 * letter, digit or '_', no card number. Ids (`cus_` + 19 digits), sent on most requests, stop here.
 */
const thirteenDigits = /(?<![A-Za-z0-9_])\d(?:[ -]?\d){12}/;

/** Runs of digit groups; a run glued to a letter or '_' is an id (`pt_` + 19 digits), not a card number. */
const digitRun = /(?<![\p{L}\p{N}_])\d+(?:[ -]\d+)*(?![\p{L}\p{N}_])/gu;

/**
 * Visa 4; Mastercard 51-55 and 2221-2720; American Express 34, 37; Diners 30, 36, 38, 39; JCB 35;
 * Discover, UnionPay and Maestro 6; Maestro 50, 56-58.
 */
const brandPrefix = /^(?:4|5[0-8]|222[1-9]|22[3-9]|2[3-6]|27[01]|2720|3[0456789]|6)/;

export function passesLuhn(digits: string): boolean {
  let sum = 0;
  for (let index = 0; index < digits.length; index += 1) {
    let digit = digits.charCodeAt(digits.length - 1 - index) - 48;
    if (index % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

const isCardNumber = (digits: string) =>
  digits.length >= 13 && digits.length <= 19 && brandPrefix.test(digits) && passesLuhn(digits);

/**
 * The card numbers in one run of digit groups: any stretch of whole groups, so that
 * "4242 4242 4242 4242 123" (a number and its security code) is found, while a 25-digit reference
 * without separators is one group and no card number.
 */
function cardNumbersInRun(run: string): Array<{ start: number; end: number; digits: string }> {
  const groups: Array<{ start: number; end: number }> = [];
  for (const group of run.matchAll(/\d+/g)) groups.push({ start: group.index, end: group.index + group[0].length });
  const found: Array<{ start: number; end: number; digits: string }> = [];
  for (let first = 0; first < groups.length; first += 1) {
    let digits = '';
    for (let last = first; last < groups.length; last += 1) {
      digits += run.slice(groups[last]!.start, groups[last]!.end);
      if (digits.length > 19) break;
      if (isCardNumber(digits)) {
        found.push({ start: groups[first]!.start, end: groups[last]!.end, digits });
        first = last;
        break;
      }
    }
  }
  return found;
}

function* cardNumbersIn(text: string): Generator<{ start: number; end: number; digits: string }> {
  if (!thirteenDigits.test(text)) return;
  for (const run of text.matchAll(digitRun)) {
    for (const found of cardNumbersInRun(run[0])) {
      yield { start: run.index + found.start, end: run.index + found.end, digits: found.digits };
    }
  }
}

export function containsCardNumber(text: string): boolean {
  // Checked first here too: this runs on every text of every request body.
  return thirteenDigits.test(text) && !cardNumbersIn(text).next().done;
}

/** The text with every card number in it shown as its last four digits: `•••• 4242`. */
export function maskCardNumbersInText(text: string): string {
  let masked = '';
  let from = 0;
  for (const found of cardNumbersIn(text)) {
    masked += `${text.slice(from, found.start)}•••• ${found.digits.slice(-4)}`;
    from = found.end;
  }
  return masked + text.slice(from);
}

/** The refusal's sentence: it names the field and never the number. */
export const cardNumberInFreeTextMessage = (field: string) =>
  `${field} looks like it contains a card number; send card numbers only in card.cardNo`;
