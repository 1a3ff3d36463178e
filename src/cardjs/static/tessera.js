/*
 * tessera.js v1 (issue 14, docs/checkout.md): collect a card in a merchant's page without the card
 * number ever entering that page. Load it from Tessera, then:
 *
 *   const tessera = Tessera('test_pu_…', { locale: 'de' }); // locale: optional, else the browser's
 *   const card = tessera.mountCard('#card');            // an iframe from Tessera's origin
 *   // or, with the Pay button's label in the shopper's language ("Pay $25.00", "25,00 $ bezahlen"):
 *   // tessera.mountCard('#card', { amount: '2500', currency: 'USD', payButton: '#pay' })
 *   const { paymentMethod } = await tessera.createPaymentMethod(card, { billingDetails });
 *   const { payment } = await tessera.confirmPayment(clientSecret, { paymentMethod: paymentMethod.id });
 *
 * Every method answers a Promise; a refusal is an object { code, msg, param } as the API answers.
 * No dependency, no build step: this file is served as it is written.
 */
(function () {
  'use strict';

  var apiPath = '/api/services/v1';
  var publicKeyForm = /^(test|live)_pu_[A-Za-z0-9]{32,64}$/;
  var clientSecretForm = /^(pt_\d{19})_secret_[0-9a-f]{16,128}$/;
  var script = document.currentScript;
  var scriptOrigin = script && script.src ? new URL(script.src).origin : null;
  var frameCount = 0;

  function failure(code, msg, param) {
    return { code: code, msg: msg, param: param || null };
  }

  function Tessera(publicKey, options) {
    if (typeof publicKey !== 'string' || !publicKeyForm.test(publicKey)) {
      throw failure(
        'invalid_request',
        'Tessera() takes a public key (test_pu_… or live_pu_…); a private key must never be in a page',
        'publicKey',
      );
    }
    var origin = (options && options.tesseraOrigin) || scriptOrigin;
    if (!origin)
      throw failure('invalid_request', "Tessera's origin is unknown: pass { tesseraOrigin }", 'tesseraOrigin');

    function api(method, path, body, clientSecret) {
      var headers = { Authorization: 'Bearer ' + publicKey };
      if (body) headers['Content-Type'] = 'application/json';
      if (clientSecret) headers.clientSecret = clientSecret;
      return fetch(origin + apiPath + path, {
        method: method,
        headers: headers,
        body: body ? JSON.stringify(body) : undefined,
        credentials: 'omit',
      })
        .catch(function () {
          return Promise.reject(failure('network_error', 'Tessera could not be reached'));
        })
        .then(function (response) {
          return response.json().then(
            function (answer) {
              if (answer && answer.code === 'success') return answer.data;
              if (answer && typeof answer.code === 'string')
                return Promise.reject(failure(answer.code, answer.msg, answer.data && answer.data.param));
              return Promise.reject(failure('api_error', 'Tessera answered HTTP ' + response.status));
            },
            function () {
              return Promise.reject(failure('api_error', 'Tessera answered HTTP ' + response.status));
            },
          );
        });
    }

    /** Mounts the card field: an iframe of Tessera's card frame inside `target` (an element or a selector). */
    function mountCard(target, mountOptions) {
      var container = typeof target === 'string' ? document.querySelector(target) : target;
      if (!container) throw failure('invalid_request', 'mountCard: no element matches ' + String(target), 'target');
      frameCount += 1;
      var frameId = 'tessera-card-' + frameCount + '-' + Math.random().toString(36).slice(2, 10);
      var frame = document.createElement('iframe');
      var query = new URLSearchParams({ key: publicKey, origin: window.location.origin, id: frameId });
      // The field's language: mountCard's, else Tessera()'s, else the shopper's browser (Accept-Language).
      var locale = (mountOptions && mountOptions.locale) || (options && options.locale);
      if (typeof locale === 'string' && locale !== '') query.set('locale', locale);
      // The Pay button shows the amount in the shopper's language (docs/checkout.md#the-page): mountCard's amount
      // (minor units, as the API takes it) and currency, written by the frame, put on payButton.
      var amount = mountOptions && mountOptions.amount;
      var currency = mountOptions && mountOptions.currency;
      if (amount !== undefined || currency !== undefined) {
        if (!/^\d{1,12}$/.test(String(amount))) {
          throw failure(
            'invalid_request',
            'mountCard: amount must be a whole number of minor units, e.g. "2500" for 25.00 USD',
            'amount',
          );
        }
        if (typeof currency !== 'string' || !/^[A-Za-z]{3}$/.test(currency)) {
          throw failure('invalid_request', 'mountCard: currency must be an ISO 4217 code, e.g. "USD"', 'currency');
        }
        query.set('amount', String(amount));
        query.set('currency', currency);
      }
      var payButton = mountOptions && mountOptions.payButton;
      var payButtonElement = typeof payButton === 'string' ? document.querySelector(payButton) : payButton || null;
      if (payButton && !payButtonElement) {
        throw failure('invalid_request', 'mountCard: no element matches payButton ' + String(payButton), 'payButton');
      }
      frame.src = origin + '/js/v1/card-frame?' + query.toString();
      frame.title = (mountOptions && mountOptions.title) || 'Card details';
      frame.setAttribute('allow', 'payment');
      frame.style.border = '0';
      frame.style.width = '100%';
      frame.style.height = '120px';
      frame.style.display = 'block';
      container.appendChild(frame);

      var listeners = {};
      var pending = {};
      var requestCount = 0;
      var state = { ready: false, complete: false, empty: true, brand: null, error: null, payLabel: null };
      var readyWaiters = [];

      function emit(type, payload) {
        (listeners[type] || []).forEach(function (listener) {
          listener(payload);
        });
      }

      function onMessage(event) {
        // Only Tessera's frame, this very one, is listened to.
        if (event.origin !== origin || event.source !== frame.contentWindow) return;
        var data = event.data;
        if (!data || data.tessera !== 'v1' || data.id !== frameId) return;
        if (data.type === 'ready') {
          state.ready = true;
          state.payLabel = typeof data.payLabel === 'string' ? data.payLabel : null;
          if (payButtonElement && state.payLabel) payButtonElement.textContent = state.payLabel;
          readyWaiters.splice(0).forEach(function (wake) {
            wake();
          });
          emit('ready', { payLabel: state.payLabel });
        } else if (data.type === 'resize' && typeof data.height === 'number') {
          frame.style.height = Math.min(Math.max(data.height, 60), 600) + 'px';
        } else if (data.type === 'change') {
          state.complete = data.complete === true;
          state.empty = data.empty === true;
          state.brand = data.brand || null;
          state.error = data.error || null;
          emit('change', { complete: state.complete, empty: state.empty, brand: state.brand, error: state.error });
        } else if (data.type === 'result' && pending[data.requestId]) {
          var settle = pending[data.requestId];
          delete pending[data.requestId];
          if (data.error) settle.reject(data.error);
          else settle.resolve(data.paymentMethod);
        }
      }
      window.addEventListener('message', onMessage);

      function post(message) {
        message.tessera = 'v1';
        message.id = frameId;
        // Sent to Tessera's origin only: were the frame navigated elsewhere, nothing would be delivered.
        frame.contentWindow.postMessage(message, origin);
      }

      function whenReady() {
        if (state.ready) return Promise.resolve();
        return new Promise(function (resolve) {
          readyWaiters.push(resolve);
        });
      }

      return {
        frame: frame,
        on: function (type, listener) {
          (listeners[type] = listeners[type] || []).push(listener);
          return this;
        },
        focus: function () {
          post({ type: 'focus' });
        },
        clear: function () {
          post({ type: 'clear' });
        },
        unmount: function () {
          window.removeEventListener('message', onMessage);
          frame.remove();
        },
        get complete() {
          return state.complete;
        },
        get brand() {
          return state.brand;
        },
        /** Internal: asks the frame to create the payment method with what the shopper typed. */
        _createPaymentMethod: function (billingDetails) {
          return whenReady().then(function () {
            requestCount += 1;
            var requestId = requestCount;
            return new Promise(function (resolve, reject) {
              pending[requestId] = { resolve: resolve, reject: reject };
              post({ type: 'createPaymentMethod', requestId: requestId, billingDetails: billingDetails || null });
            });
          });
        },
      };
    }

    /** The frame creates the payment method (POST /payment_methods/create with the public key). */
    function createPaymentMethod(card, details) {
      if (!card || typeof card._createPaymentMethod !== 'function')
        return Promise.reject(
          failure('invalid_request', 'createPaymentMethod takes the card that mountCard answered', 'card'),
        );
      return card._createPaymentMethod(details && details.billingDetails).then(function (paymentMethod) {
        return { paymentMethod: paymentMethod };
      });
    }

    function retrievePayment(clientSecret) {
      var match = clientSecretForm.exec(String(clientSecret));
      if (!match)
        return Promise.reject(
          failure('invalid_request', 'clientSecret is not a payment client secret', 'clientSecret'),
        );
      return api('GET', '/payment/' + match[1], null, clientSecret).then(function (payment) {
        return { payment: payment };
      });
    }

    function outcome(payment) {
      if (payment.status === 'failed')
        return Promise.reject({
          code: payment.errorCode || 'payment_failed',
          msg: payment.errorMessage || 'The payment failed',
          param: null,
          payment: payment,
        });
      return { payment: payment };
    }

    /** A refusal that says nothing of the payment: Tessera not reached, busy, or a proxy's error page. */
    var transientCodes = ['network_error', 'api_error', 'rate_limited', 'service_unavailable'];

    /**
     * 3-D Secure in a pop-up: Tessera's challenge page, watched until the payment leaves
     * requires_action. A read that fails for a transient reason is asked again, later each time
     * (at most 5 s apart), while the window is open; once it is closed, until 4 reads in a row have
     * failed: the shopper may have authenticated, and only the payment can say.
     */
    function authenticateInPopup(clientSecret, popup) {
      return new Promise(function (resolve, reject) {
        var failedReads = 0;
        function check() {
          retrievePayment(clientSecret).then(
            function (result) {
              failedReads = 0;
              var current = result.payment;
              if (current.status !== 'requires_action') {
                if (!popup.closed) popup.close();
                resolve(current);
              } else if (popup.closed) {
                reject(
                  failure('authentication_incomplete', 'The 3-D Secure window was closed before authentication ended'),
                );
              } else setTimeout(check, 1000);
            },
            function (error) {
              failedReads += 1;
              if (transientCodes.indexOf(error.code) < 0 || (popup.closed && failedReads > 3)) reject(error);
              else setTimeout(check, Math.min(1000 * failedReads, 5000));
            },
          );
        }
        setTimeout(check, 1000);
      });
    }

    /**
     * Confirms the payment of `clientSecret` (POST /payment/{id}/confirm with the public key and the
     * clientSecret header). `paymentMethod` is a pm_ id or a mounted card (created first).
     * 3-D Secure: `handleActions: 'popup'` (default; a redirect when no pop-up may open and a
     * returnUrl is given) or `'redirect'` (needs `returnUrl`).
     */
    function confirmPayment(clientSecret, confirmOptions) {
      var opts = confirmOptions || {};
      var match = clientSecretForm.exec(String(clientSecret));
      if (!match)
        return Promise.reject(
          failure('invalid_request', 'clientSecret is not a payment client secret', 'clientSecret'),
        );
      var redirect = opts.handleActions === 'redirect';
      if (redirect && !opts.returnUrl)
        return Promise.reject(failure('invalid_request', "handleActions 'redirect' needs a returnUrl", 'returnUrl'));
      var method = opts.paymentMethod;
      var methodId =
        method && typeof method._createPaymentMethod === 'function'
          ? createPaymentMethod(method, { billingDetails: opts.billingDetails }).then(function (result) {
              return result.paymentMethod.id;
            })
          : Promise.resolve(method);
      return methodId
        .then(function (id) {
          var body = {};
          if (id) body.paymentMethod = id;
          // In a pop-up, the challenge page ends on its own result page; a redirect comes back to returnUrl.
          if (redirect) body.returnUrl = opts.returnUrl;
          return api('POST', '/payment/' + match[1] + '/confirm', body, clientSecret);
        })
        .then(function (payment) {
          var challenge =
            payment.status === 'requires_action' && payment.nextAction && payment.nextAction.redirectToUrl;
          if (!challenge) return outcome(payment);
          // Within the few seconds a click lets a page open a window (the confirm is one round trip).
          var popup = redirect ? null : window.open(challenge, 'tessera-3ds', 'width=480,height=640');
          if (popup) return authenticateInPopup(clientSecret, popup).then(outcome);
          if (redirect) {
            window.location.assign(challenge);
            return new Promise(function () {});
          }
          // The payment stays requires_action: retrievePayment(clientSecret).payment.nextAction has the page.
          return Promise.reject(
            failure('authentication_required', '3-D Secure is needed and the pop-up was blocked', null),
          );
        });
    }

    return {
      mountCard: mountCard,
      createPaymentMethod: createPaymentMethod,
      confirmPayment: confirmPayment,
      retrievePayment: retrievePayment,
    };
  }

  window.Tessera = Tessera;
})();
