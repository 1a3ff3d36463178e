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

  var card = window.TesseraCardInput;
  var messages = JSON.parse(form.getAttribute('data-messages') || '{}');
  var badge = document.getElementById('card-brand');

  /** A refusal as the API shapes it (code, param), its message for the shopper, in their language. */
  function refusal(param, key) {
    return { code: 'invalid_request', msg: messages[key] || key, param: param };
  }

  /**
   * The API's rules (src/payment-methods/card.ts), field by field in the form's order, with
   * shopper-facing messages; the API decides in the end. `final`: the card is being sent (or the
   * field was left), so an unfinished field is wrong too.
   */
  function checkCard(final) {
    var number = card.digits(fields.cardNo.value);
    var brand = card.brandOf(number);
    var numberError = card.checkNumber(fields.cardNo.value, final);
    var expiry = card.checkExpiry(fields.expiry.value, final);
    var codeError = card.checkSecurityCode(fields.securityCode.value, brand, final);
    var errors = [
      numberError && refusal('card.cardNo', numberError),
      expiry.error && refusal(expiry.error === 'expiryPast' ? 'card.expYear' : 'card.expMonth', expiry.error),
      codeError && refusal('card.securityCode', codeError),
    ].filter(Boolean);
    if (errors.length > 0 || !expiry.expMonth) return { errors: errors };
    return {
      card: {
        cardNo: number,
        expMonth: expiry.expMonth,
        expYear: expiry.expYear,
        securityCode: fields.securityCode.value.trim(),
      },
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
    var text = error ? error.msg : '';
    // Written only when it changes, so that the alert is read out once.
    if (errorLine.textContent !== text) errorLine.textContent = text;
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

  function showBrand(number) {
    var brand = card.brandOf(number);
    badge.textContent = '';
    if (!brand || number.length < 2) return null;
    var label = document.createElement('span');
    label.className = 'sr-only';
    label.textContent = badge.getAttribute('data-label') + ': ';
    badge.appendChild(label);
    badge.appendChild(document.createTextNode(card.brandName(brand)));
    return brand;
  }

  /**
   * What the parent may know while the shopper types: whether the card looks complete, its brand,
   * and the first mistake in a field already left (`blurred`) or one certain as typed.
   */
  function reportChange(blurred) {
    var complete = Boolean(checkCard(true).card);
    var asTyped = checkCard(false).errors || [];
    var onLeaving = blurred
      ? (checkCard(true).errors || []).filter(function (candidate) {
          return fields[fieldOfParam[candidate.param]].value !== '';
        })
      : [];
    var shown = onLeaving[0] || asTyped[0] || null;
    showError(shown);
    var number = card.digits(fields.cardNo.value);
    send({
      type: 'change',
      complete: complete,
      empty: number === '' && fields.expiry.value === '' && fields.securityCode.value === '',
      brand: /^\d{2,}$/.test(number) ? showBrand(number) : showBrand(''),
      error: shown,
    });
  }

  /** The API's refusal with a message for the shopper (the field it names says which); never the API's words. */
  function apiError(body, status) {
    if (body && typeof body.code === 'string' && typeof body.msg === 'string') {
      var param = (body.data && body.data.param) || null;
      var key = {
        'card.cardNo': /brand/i.test(body.msg) ? 'cardBrandUnsupported' : 'cardNumberInvalid',
        'card.expMonth': 'expiryPast',
        'card.expYear': 'expiryPast',
        'card.securityCode': 'securityCodeIncomplete',
      }[param];
      return { code: body.code, msg: messages[key || 'paymentFailed'], param: param };
    }
    return { code: 'api_error', msg: messages.paymentFailed, param: null, status: status };
  }

  function createPaymentMethod(request) {
    var checked = checkCard(true);
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
          return Promise.reject({ code: 'network_error', msg: messages.networkError, param: null });
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
      showBrand('');
      showError(null);
    }
    if (data.type !== 'createPaymentMethod') return;
    if (busy) {
      send({
        type: 'result',
        requestId: data.requestId,
        error: { code: 'busy', msg: messages.busy, param: null },
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

  fields.cardNo.addEventListener('input', function () {
    card.rewrite(fields.cardNo, card.formatNumber(fields.cardNo.value));
  });
  fields.expiry.addEventListener('input', function (event) {
    var deleting = event.inputType && event.inputType.indexOf('delete') === 0;
    card.rewrite(fields.expiry, card.formatExpiry(fields.expiry.value, deleting));
  });
  fields.securityCode.addEventListener('input', function () {
    card.rewrite(fields.securityCode, fields.securityCode.value.replace(/\D/g, '').slice(0, 4));
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
  // The Pay button's label, when mountCard gave an amount (written on the server, in the field's language).
  send({ type: 'ready', payLabel: form.getAttribute('data-pay-label') || null });
  reportHeight();
})();
