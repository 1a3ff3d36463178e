/*
 * The card checks that run as the shopper types (issue 22), shared by the hosted pages'
 * hosted-form.js and tessera.js's card-frame.js: the brand from the first digits, the number
 * spaced as printed on the card, the Luhn check, the expiry month and date, the security code's
 * length. Each check answers a message key of src/shopper/messages.ts, or null; `final` is false
 * while the shopper is still typing (an unfinished field is not wrong yet) and true on leaving
 * the field or paying. The server (and the API) check everything again: this only helps.
 */
(function () {
  'use strict';

  var names = {
    visa: 'Visa',
    mastercard: 'Mastercard',
    amex: 'American Express',
    discover: 'Discover',
    jcb: 'JCB',
    diners: 'Diners Club',
    unionpay: 'UnionPay',
  };
  // The lengths each brand issues (the API accepts 12 to 19 digits of a known brand).
  var lengths = {
    visa: [13, 16, 19],
    mastercard: [16],
    amex: [15],
    discover: [16, 17, 18, 19],
    jcb: [16, 17, 18, 19],
    diners: [14, 15, 16, 17, 18, 19],
    unionpay: [16, 17, 18, 19],
  };

  function digits(text) {
    return String(text).replace(/[\s-]/g, '');
  }

  /** The brand as the API decides it (src/payment-methods/card.ts), from the first digits. */
  function brandOf(number) {
    var two = Number(number.slice(0, 2));
    var three = Number(number.slice(0, 3));
    var four = Number(number.slice(0, 4));
    if (number.charAt(0) === '4') return 'visa';
    if ((two >= 51 && two <= 55) || (four >= 2221 && four <= 2720)) return 'mastercard';
    if (two === 34 || two === 37) return 'amex';
    if (four === 6011 || two === 65 || (three >= 644 && three <= 649)) return 'discover';
    if (four >= 3528 && four <= 3589) return 'jcb';
    if (two === 36 || two === 38 || two === 39 || (three >= 300 && three <= 305)) return 'diners';
    if (two === 62) return 'unionpay';
    return null;
  }

  function passesLuhn(number) {
    var sum = 0;
    for (var index = 0; index < number.length; index += 1) {
      var digit = Number(number.charAt(number.length - 1 - index));
      if (index % 2 === 1) {
        digit *= 2;
        if (digit > 9) digit -= 9;
      }
      sum += digit;
    }
    return sum % 10 === 0;
  }

  /** Spaced as printed: 4 4 4 4 (…), American Express and 14-digit Diners Club 4 6 5. */
  function formatNumber(number) {
    var clean = digits(number).replace(/\D/g, '').slice(0, 19);
    var brand = brandOf(clean);
    var groups = brand === 'amex' || (brand === 'diners' && clean.length <= 14) ? [4, 6, 5] : [4, 4, 4, 4, 3];
    var parts = [];
    var at = 0;
    for (var index = 0; index < groups.length && at < clean.length; index += 1) {
      parts.push(clean.slice(at, at + groups[index]));
      at += groups[index];
    }
    if (at < clean.length) parts.push(clean.slice(at));
    return parts.join(' ');
  }

  function checkNumber(text, final) {
    var number = digits(text);
    if (number === '') return final ? 'cardNumberMissing' : null;
    if (!/^\d+$/.test(number)) return 'cardNumberInvalid';
    var brand = brandOf(number);
    if (number.length >= 2 && brand === null && (final || number.length >= 4)) return 'cardBrandUnsupported';
    var allowed = brand ? lengths[brand] : [12, 13, 14, 15, 16, 17, 18, 19];
    var longest = allowed[allowed.length - 1];
    var complete = allowed.indexOf(number.length) !== -1;
    if (number.length > longest) return 'cardNumberInvalid';
    // A number of its usual full length (16, or the brand's longest) is judged at once; a shorter
    // one that may still grow (a 13-digit Visa prefix) only when the shopper moves on.
    if (complete && (final || number.length >= Math.min(16, longest)))
      return passesLuhn(number) ? null : 'cardNumberInvalid';
    if (complete) return null;
    return final ? (number.length < allowed[0] ? 'cardNumberIncomplete' : 'cardNumberInvalid') : null;
  }

  /** `MM / YY` as typed: a first digit above 1 is a month of its own (4 → 04). */
  function formatExpiry(text, deleting) {
    var raw = String(text).replace(/\D/g, '').slice(0, 6);
    if (raw.length === 1 && raw > '1') raw = '0' + raw;
    if (raw.length < 2) return raw;
    if (raw.length === 2) return deleting ? raw : raw + ' / ';
    return raw.slice(0, 2) + ' / ' + raw.slice(2);
  }

  /** `{ error }` or `{ expMonth, expYear }` (or `{}` while still typing). */
  function checkExpiry(text, final, now) {
    var value = String(text).trim();
    if (value === '') return final ? { error: 'expiryMissing' } : {};
    var match = /^(\d{1,2})\s*\/?\s*(\d{0,4})$/.exec(value);
    if (!match) return { error: 'expiryIncomplete' };
    var month = Number(match[1]);
    if (match[1].length === 2 && (month < 1 || month > 12)) return { error: 'expiryMonthInvalid' };
    if (match[2].length !== 2 && match[2].length !== 4) return final ? { error: 'expiryIncomplete' } : {};
    if (month < 1 || month > 12) return { error: 'expiryMonthInvalid' };
    var year = Number(match[2].length === 2 ? '20' + match[2] : match[2]);
    var today = now || new Date();
    var thisYear = today.getUTCFullYear();
    if (year < thisYear || (year === thisYear && month < today.getUTCMonth() + 1)) return { error: 'expiryPast' };
    return { expMonth: (month < 10 ? '0' : '') + month, expYear: String(year) };
  }

  function checkSecurityCode(text, brand, final) {
    var code = String(text).trim();
    if (code === '') return final ? 'securityCodeMissing' : null;
    if (!/^\d+$/.test(code)) return 'securityCodeIncomplete';
    var needed = brand === 'amex' ? [4] : brand ? [3] : [3, 4];
    if (code.length > needed[needed.length - 1]) return 'securityCodeIncomplete';
    return final && needed.indexOf(code.length) === -1 ? 'securityCodeIncomplete' : null;
  }

  /** Keeps the caret after the same count of digits once the field is rewritten with spaces. */
  function rewrite(input, formatted) {
    var caret = input.selectionStart === null ? input.value.length : input.selectionStart;
    var before = input.value.slice(0, caret).replace(/\D/g, '').length;
    var atEnd = caret >= input.value.length;
    if (input.value === formatted) return;
    input.value = formatted;
    if (atEnd || document.activeElement !== input) return;
    var position = 0;
    for (var seen = 0; position < formatted.length && seen < before; position += 1) {
      if (/\d/.test(formatted.charAt(position))) seen += 1;
    }
    input.setSelectionRange(position, position);
  }

  window.TesseraCardInput = {
    digits: digits,
    brandOf: brandOf,
    brandName: function (brand) {
      return (brand && names[brand]) || '';
    },
    passesLuhn: passesLuhn,
    formatNumber: formatNumber,
    checkNumber: checkNumber,
    formatExpiry: formatExpiry,
    checkExpiry: checkExpiry,
    checkSecurityCode: checkSecurityCode,
    rewrite: rewrite,
  };
})();
