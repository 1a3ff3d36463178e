/*
 * The hosted checkout and invoice pages' card form, as the shopper types (issue 22): the number
 * spaced in fours, the brand shown, the Luhn check and the expiry checked, each message in the
 * page's language (the form's data-messages) and read out by screen readers (each field's
 * message sits in an aria-live region). Without this script the form posts as it is and the
 * server answers the same messages (progressive enhancement). Served from Tessera's origin.
 */
(function () {
  'use strict';

  var card = window.TesseraCardInput;
  var form = document.querySelector('form[data-card-form]');
  if (!card || !form) return;
  var messages = JSON.parse(form.getAttribute('data-messages') || '{}');
  var fields = {
    cardNo: form.querySelector('#cardNo'),
    expiry: form.querySelector('#expiry'),
    securityCode: form.querySelector('#securityCode'),
    name: form.querySelector('#name'),
  };
  var order = ['cardNo', 'expiry', 'securityCode', 'name'];
  var badge = form.querySelector('#card-brand');
  var button = form.querySelector('button[type=submit]');
  var buttonText = button.textContent;
  // The script shows its own messages, in the page's language, rather than the browser's bubbles.
  form.noValidate = true;

  function brand() {
    return card.brandOf(card.digits(fields.cardNo.value));
  }

  function problem(name, final) {
    var value = fields[name].value;
    if (name === 'cardNo') return card.checkNumber(value, final);
    if (name === 'expiry') return card.checkExpiry(value, final).error || null;
    if (name === 'securityCode') return card.checkSecurityCode(value, brand(), final);
    return final && value.trim() === '' ? 'nameMissing' : null;
  }

  /** The field's message in its live region (written only when it changes, so it is read once). */
  function show(name, key) {
    var live = document.getElementById(name + '-live');
    var text = key ? messages[key] || '' : '';
    if (live.textContent === text) return;
    live.textContent = '';
    if (text) {
      var line = document.createElement('p');
      line.className = 'error';
      line.id = name + '-error';
      line.textContent = text;
      live.appendChild(line);
      fields[name].setAttribute('aria-invalid', 'true');
    } else fields[name].removeAttribute('aria-invalid');
  }

  function showBrand() {
    var name = card.brandName(brand());
    badge.textContent = '';
    if (!name) return;
    var label = document.createElement('span');
    label.className = 'sr-only';
    label.textContent = badge.getAttribute('data-label') + ': ';
    badge.appendChild(label);
    badge.appendChild(document.createTextNode(name));
    badge.setAttribute('data-brand', brand());
  }

  fields.cardNo.addEventListener('input', function () {
    card.rewrite(fields.cardNo, card.formatNumber(fields.cardNo.value));
    showBrand();
    show('cardNo', problem('cardNo', false));
  });
  fields.expiry.addEventListener('input', function (event) {
    var deleting = event.inputType && event.inputType.indexOf('delete') === 0;
    card.rewrite(fields.expiry, card.formatExpiry(fields.expiry.value, deleting));
    show('expiry', problem('expiry', false));
  });
  fields.securityCode.addEventListener('input', function () {
    card.rewrite(fields.securityCode, fields.securityCode.value.replace(/\D/g, '').slice(0, 4));
    show('securityCode', problem('securityCode', false));
  });
  fields.name.addEventListener('input', function () {
    if (fields.name.value.trim() !== '') show('name', null);
  });
  order.forEach(function (name) {
    // Leaving a field judges it as finished; passing through an empty one does not nag.
    fields[name].addEventListener('blur', function () {
      if (fields[name].value !== '') show(name, problem(name, true));
    });
  });

  form.addEventListener('submit', function (event) {
    var first = null;
    order.forEach(function (name) {
      var key = problem(name, true);
      show(name, key);
      if (key && !first) first = name;
    });
    if (first) {
      event.preventDefault();
      fields[first].focus();
      return;
    }
    // One post per click: the button says the payment is under way until the next page.
    button.disabled = true;
    button.textContent = messages.processing || buttonText;
  });
  // Back from the next page (the browser's page cache): the form can be used again.
  window.addEventListener('pageshow', function () {
    button.disabled = false;
    button.textContent = buttonText;
  });
  if (fields.cardNo.value) showBrand();
})();
