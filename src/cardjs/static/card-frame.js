/*
 * Tessera's card frame (issue 14): runs inside the iframe that tessera.js mounts, on Tessera's own
 * origin. The shopper types the card here; the merchant's page never sees the number or the
 * security code. The frame checks the card as the API does, creates the payment method itself
 * with the public key, and tells the parent page only the outcome (a pm_ id, brand, last four).
 * Messages go only to the parent origin the server checked, and are taken only from it.
 */
(function () {
  'use strict';

  var form = document.getElementById('card-form');
  var key = form.getAttribute('data-key');
  var parentOrigin = form.getAttribute('data-parent-origin');
  var frameId = form.getAttribute('data-frame-id');
  var apiBase = '/api/services/v1';
  var fields = {
    cardNo: document.getElementById('cardNo'),
    expiry: document.getElementById('expiry'),
    securityCode: document.getElementById('securityCode'),
  };
  var errorLine = document.getElementById('error');
  var busy = false;

  function send(message) {
    message.tessera = 'v1';
    message.id = frameId;
    window.parent.postMessage(message, parentOrigin);
  }

  function digits(text) {
    return text.replace(/[\s-]/g, '');
  }

  function brandOf(number) {
    var two = Number(number.slice(0, 2));
    var four = Number(number.slice(0, 4));
    if (number.charAt(0) === '4') return 'visa';
    if ((two >= 51 && two <= 55) || (four >= 2221 && four <= 2720)) return 'mastercard';
    if (two === 34 || two === 37) return 'amex';
    if (four === 6011 || two === 65 || (Number(number.slice(0, 3)) >= 644 && Number(number.slice(0, 3)) <= 649))
      return 'discover';
    if (four >= 3528 && four <= 3589) return 'jcb';
    if (
      two === 36 ||
      two === 38 ||
      two === 39 ||
      (Number(number.slice(0, 3)) >= 300 && Number(number.slice(0, 3)) <= 305)
    )
      return 'diners';
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

  function refusal(param, msg) {
    return { code: 'invalid_request', msg: msg, param: param };
  }

  function checkNumber(number) {
    if (!/^\d{12,19}$/.test(number)) return refusal('card.cardNo', 'card.cardNo must be a string of 12 to 19 digits');
    if (brandOf(number) === null) return refusal('card.cardNo', 'card.cardNo is not a supported card brand');
    if (!passesLuhn(number)) return refusal('card.cardNo', 'card.cardNo must pass the Luhn check');
    return null;
  }

  function parseExpiry(text) {
    var expiry = /^\s*(\d{1,2})\s*\/\s*(\d{2}|\d{4})\s*$/.exec(text);
    if (!expiry) return { error: refusal('card.expMonth', 'The expiry must be written MM/YY') };
    var month = Number(expiry[1]);
    var year = Number(expiry[2].length === 2 ? '20' + expiry[2] : expiry[2]);
    if (month < 1 || month > 12)
      return { error: refusal('card.expMonth', 'card.expMonth must be a month from 01 to 12') };
    var now = new Date();
    if (year < now.getUTCFullYear()) return { error: refusal('card.expYear', 'card.expYear must not be in the past') };
    if (year === now.getUTCFullYear() && month < now.getUTCMonth() + 1)
      return { error: refusal('card.expMonth', 'card.expMonth must not be in the past: the card has expired') };
    return { expMonth: String(month).padStart(2, '0'), expYear: String(year) };
  }

  function checkSecurityCode(code, brand) {
    var lengths = brand === 'amex' ? [4] : brand ? [3] : [3, 4];
    if (!/^\d+$/.test(code) || lengths.indexOf(code.length) === -1)
      return refusal('card.securityCode', 'card.securityCode must be ' + lengths.join(' or ') + ' digits');
    return null;
  }

  /**
   * The same rules, field names and messages as the API (src/payment-methods/card.ts), field by
   * field in the form's order; the API decides in the end.
   */
  function checkCard() {
    var number = digits(fields.cardNo.value);
    var brand = brandOf(number);
    var expiry = parseExpiry(fields.expiry.value);
    var code = fields.securityCode.value.trim();
    var errors = [checkNumber(number), expiry.error || null, checkSecurityCode(code, brand)].filter(Boolean);
    if (errors.length > 0) return { errors: errors };
    return {
      card: { cardNo: number, expMonth: expiry.expMonth, expYear: expiry.expYear, securityCode: code },
      brand: brand,
    };
  }

  var fieldOfParam = {
    'card.cardNo': 'cardNo',
    'card.expMonth': 'expiry',
    'card.expYear': 'expiry',
    'card.securityCode': 'securityCode',
  };

  function showError(error) {
    errorLine.textContent = error ? error.msg : '';
    Object.keys(fields).forEach(function (name) {
      var wrong = Boolean(error && fieldOfParam[error.param] === name);
      if (wrong) fields[name].setAttribute('aria-invalid', 'true');
      else fields[name].removeAttribute('aria-invalid');
    });
    reportHeight();
  }

  function reportHeight() {
    send({ type: 'resize', height: Math.ceil(document.documentElement.scrollHeight) });
  }

  /** What the parent may know while the shopper types: whether the card looks complete, its brand. */
  function reportChange(showErrors) {
    var checked = checkCard();
    var error = checked.card ? null : checked.errors[0];
    // A field not typed yet is not wrong yet: the first mistake in a field already filled is shown.
    var shown =
      (checked.errors || []).filter(function (candidate) {
        return fields[fieldOfParam[candidate.param]].value !== '';
      })[0] || null;
    if (showErrors) showError(shown);
    var number = digits(fields.cardNo.value);
    send({
      type: 'change',
      complete: !error,
      empty: number === '' && fields.expiry.value === '' && fields.securityCode.value === '',
      brand: /^\d{2,}$/.test(number) ? brandOf(number) : null,
      error: showErrors ? shown : null,
    });
  }

  function apiError(body, status) {
    if (body && typeof body.code === 'string' && typeof body.msg === 'string')
      return { code: body.code, msg: body.msg, param: (body.data && body.data.param) || null };
    return { code: 'api_error', msg: 'Tessera answered HTTP ' + status, param: null };
  }

  function createPaymentMethod(request) {
    var checked = checkCard();
    if (!checked.card) {
      showError(checked.errors[0]);
      return Promise.reject(checked.errors[0]);
    }
    var body = { type: 'card', card: checked.card };
    if (request.billingDetails) body.billingDetails = request.billingDetails;
    return fetch(apiBase + '/payment_methods/create', {
      method: 'POST',
      headers: { Authorization: 'Bearer ' + key, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
      credentials: 'omit',
    })
      .then(
        function (response) {
          return response.json().then(
            function (answer) {
              return { status: response.status, answer: answer };
            },
            function () {
              return { status: response.status, answer: null };
            },
          );
        },
        function () {
          return Promise.reject({ code: 'network_error', msg: 'Tessera could not be reached', param: null });
        },
      )
      .then(function (result) {
        if (!result.answer || result.answer.code !== 'success') {
          var error = apiError(result.answer, result.status);
          showError(error);
          return Promise.reject(error);
        }
        showError(null);
        var method = result.answer.data;
        // Only what is safe to show: the id, the brand, the last four digits and the expiry.
        return {
          id: method.id,
          card: {
            brand: method.card.brand,
            last4: method.card.last4,
            expMonth: method.card.expMonth,
            expYear: method.card.expYear,
          },
          billingDetails: method.billingDetails,
        };
      });
  }

  window.addEventListener('message', function (event) {
    if (event.origin !== parentOrigin || event.source !== window.parent) return;
    var data = event.data;
    if (!data || data.tessera !== 'v1' || data.id !== frameId) return;
    if (data.type === 'focus') fields.cardNo.focus();
    if (data.type === 'clear') {
      fields.cardNo.value = '';
      fields.expiry.value = '';
      fields.securityCode.value = '';
      showError(null);
    }
    if (data.type !== 'createPaymentMethod') return;
    if (busy) {
      send({
        type: 'result',
        requestId: data.requestId,
        error: { code: 'busy', msg: 'A card is already being sent', param: null },
      });
      return;
    }
    busy = true;
    createPaymentMethod(data)
      .then(
        function (paymentMethod) {
          send({ type: 'result', requestId: data.requestId, paymentMethod: paymentMethod });
        },
        function (error) {
          send({ type: 'result', requestId: data.requestId, error: error });
        },
      )
      .then(function () {
        busy = false;
      });
  });

  Object.keys(fields).forEach(function (name) {
    fields[name].addEventListener('input', function () {
      reportChange(false);
    });
    fields[name].addEventListener('blur', function () {
      if (fields[name].value !== '') reportChange(true);
    });
  });
  // Enter in a field sends nothing anywhere: the merchant's page decides when to pay.
  form.addEventListener('submit', function (event) {
    event.preventDefault();
  });
  send({ type: 'ready' });
  reportHeight();
})();
