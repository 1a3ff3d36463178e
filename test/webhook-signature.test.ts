import { createHmac } from 'node:crypto';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalJson } from '../src/events/canonical-json.js';
import { formatRequestTime, signWebhook } from '../src/webhooks/signature.js';
import { endpointEventType, endpointEventTypes } from '../src/events/event-types.js';
import { verifyWebhook, WebhookVerificationError, type WebhookVerificationReason } from '../sdk/verify-webhook.js';
import { phpReencode } from './helpers/receiver.js';

const token = 'whsec_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKl';
const now = new Date('2026-11-22T12:00:00.000Z');

/** HMAC-SHA256 over `<request-time>.<body>`, hex, computed here and not by the code under test. */
function independentSignature(key: string, requestTime: string, body: string | Buffer): string {
  const mac = createHmac('sha256', Buffer.from(key, 'utf8'));
  mac.update(Buffer.from(requestTime, 'utf8'));
  mac.update(Buffer.from('.', 'utf8'));
  mac.update(typeof body === 'string' ? Buffer.from(body, 'utf8') : body);
  return mac.digest('hex');
}

const event = {
  id: 'evt_1234567890123456789',
  apiVersion: 'v1',
  type: 'endpoint_payment.payment_succeeded',
  created: '2026-11-22T11:59:58.000Z',
  data: { id: 'pt_1234567890123456789', amount: '1999', currency: 'USD', description: '订单 №42 — café' },
};
const body = canonicalJson(event);

function signedHeaders(at: Date = now, key = token, text = body) {
  const requestTime = formatRequestTime(at);
  return { 'Request-Time': requestTime, Signature: signWebhook(key, requestTime, text) };
}

function reasonOf(run: () => unknown): WebhookVerificationReason {
  try {
    run();
  } catch (err) {
    assert.ok(err instanceof WebhookVerificationError, String(err));
    return err.reason;
  }
  assert.fail('verification passed');
}

describe('webhook signature (docs/webhooks.md#what-is-sent)', () => {
  test('request-time is UTC in the form yyyy-MM-ddTHH:mm:ss', () => {
    assert.equal(formatRequestTime(new Date('2026-01-02T03:04:05.678Z')), '2026-01-02T03:04:05');
    assert.match(formatRequestTime(new Date()), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/);
  });

  test('signs HMAC-SHA256(token, request-time + "." + raw body) as 64 upper-case hex characters', () => {
    const requestTime = '2026-11-22T12:00:00';
    const signature = signWebhook(token, requestTime, body);
    assert.match(signature, /^[0-9A-F]{64}$/);
    assert.equal(signature, independentSignature(token, requestTime, body).toUpperCase());
    // Over the bytes of the body: non-ASCII text in a raw (unescaped) body is signed as UTF-8.
    const raw = '{"name":"李雷 🎉"}';
    assert.equal(signWebhook(token, requestTime, raw), independentSignature(token, requestTime, raw).toUpperCase());
    assert.notEqual(signWebhook(token, '2026-11-22T12:00:01', body), signature);
    assert.notEqual(signWebhook(`${token}x`, requestTime, body), signature);
  });
});

describe('verifyWebhook (sdk)', () => {
  test('accepts a valid notification and answers the parsed event', () => {
    const verified = verifyWebhook({ headers: signedHeaders(), rawBody: body, token, now });
    assert.deepEqual(verified, event);
    // Raw bytes as well as text; headers in any capitalisation or as a Headers object.
    assert.deepEqual(
      verifyWebhook({ headers: signedHeaders(), rawBody: Buffer.from(body, 'utf8'), token, now }),
      event,
    );
    const { 'Request-Time': requestTime, Signature: signature } = signedHeaders();
    assert.deepEqual(
      verifyWebhook({ headers: { 'request-time': requestTime, signature }, rawBody: body, token, now }),
      event,
    );
    assert.deepEqual(
      verifyWebhook({
        headers: new Headers({ 'REQUEST-TIME': requestTime, SIGNATURE: signature }),
        rawBody: body,
        token,
        now,
      }),
      event,
    );
  });

  test('compares the signature without regard to case', () => {
    const headers = signedHeaders();
    const lower = { ...headers, Signature: headers.Signature.toLowerCase() };
    assert.deepEqual(verifyWebhook({ headers: lower, rawBody: body, token, now }), event);
    const mixed = headers.Signature.split('')
      .map((char, index) => (index % 2 ? char.toLowerCase() : char))
      .join('');
    assert.deepEqual(verifyWebhook({ headers: { ...headers, Signature: mixed }, rawBody: body, token, now }), event);
  });

  test('refuses a bad signature: another token, an altered body, an altered time, a malformed value', () => {
    const headers = signedHeaders();
    const verify = (options: Partial<Parameters<typeof verifyWebhook>[0]>) => () =>
      verifyWebhook({ headers, rawBody: body, token, now, ...options });
    assert.equal(reasonOf(verify({ token: `${token}x` })), 'bad_signature');
    assert.equal(reasonOf(verify({ rawBody: body.replace('1999', '1') })), 'bad_signature');
    // A body re-encoded by a verifier that does not keep the canonical form no longer matches.
    assert.equal(reasonOf(verify({ rawBody: JSON.stringify(JSON.parse(body), null, 1) })), 'bad_signature');
    assert.equal(
      reasonOf(verify({ headers: { ...headers, 'Request-Time': formatRequestTime(new Date(now.getTime() - 1000)) } })),
      'bad_signature',
    );
    for (const signature of ['', 'abc', 'Z'.repeat(64), headers.Signature.slice(0, 62), `${headers.Signature}00`]) {
      const run = verify({ headers: { ...headers, Signature: signature } });
      assert.ok(['bad_signature', 'missing_signature'].includes(reasonOf(run)), signature);
    }
  });

  test('refuses a notification without request-time or signature', () => {
    const { 'Request-Time': requestTime, Signature: signature } = signedHeaders();
    assert.equal(
      reasonOf(() => verifyWebhook({ headers: { Signature: signature }, rawBody: body, token, now })),
      'missing_request_time',
    );
    assert.equal(
      reasonOf(() => verifyWebhook({ headers: { 'Request-Time': requestTime }, rawBody: body, token, now })),
      'missing_signature',
    );
    assert.equal(
      reasonOf(() => verifyWebhook({ headers: {}, rawBody: body, token, now })),
      'missing_request_time',
    );
  });

  test('refuses a request-time more than the tolerance (3 minutes by default) either side of now', () => {
    const at = (offsetSeconds: number) => new Date(now.getTime() + offsetSeconds * 1000);
    const verifyAt = (sentAt: Date, toleranceSeconds?: number) => () =>
      verifyWebhook({ headers: signedHeaders(sentAt), rawBody: body, token, now, toleranceSeconds });
    assert.deepEqual(verifyAt(at(-180))(), event);
    assert.deepEqual(verifyAt(at(180))(), event);
    assert.equal(reasonOf(verifyAt(at(-181))), 'stale_request_time');
    assert.equal(reasonOf(verifyAt(at(181))), 'future_request_time');
    assert.equal(reasonOf(verifyAt(at(-3600))), 'stale_request_time');
    assert.deepEqual(verifyAt(at(-3600), 7200)(), event);
    assert.equal(reasonOf(verifyAt(at(-31), 30)), 'stale_request_time');
  });

  test('refuses a request-time that is not yyyy-MM-ddTHH:mm:ss', () => {
    for (const requestTime of ['2026-11-22 12:00:00', '2026-11-22T12:00:00Z', '1763812800', 'yesterday']) {
      const headers = { 'Request-Time': requestTime, Signature: signWebhook(token, requestTime, body) };
      assert.equal(
        reasonOf(() => verifyWebhook({ headers, rawBody: body, token, now })),
        'malformed_request_time',
        requestTime,
      );
    }
  });

  test('refuses a correctly signed body that is not a webhook event', () => {
    for (const text of ['not json', '[1,2]', '{"id":"evt_1","type":"payment.succeeded"}', 'null']) {
      const headers = signedHeaders(now, token, text);
      assert.equal(
        reasonOf(() => verifyWebhook({ headers, rawBody: text, token, now })),
        'malformed_body',
        text,
      );
    }
  });
});

describe('canonical JSON (docs/webhooks.md#what-is-sent)', () => {
  const cases: Record<string, unknown> = {
    chinese: { firstName: '张', lastName: '伟', address: { city: '北京市', line1: '朝阳区建国路88号' } },
    arabic: { description: 'طلب رقم ٤٢', address: { city: 'الرياض', line1: 'شارع الملك فهد' } },
    emoji: { description: 'Thanks 🎉💳👍🏽', name: '🇯🇵 寿司' },
    slashes: { notifyUrl: 'https://shop.example.com/notify/a/b?x=1/2', path: '/', backslashSlash: '\\/' },
    'empty objects': { metadata: {}, nested: { inner: {} }, list: [], items: [{}], kept: { a: 1 } },
    mixed: {
      quote: 'say "hi"',
      backslash: 'C:\\path',
      control: 'line\nbreak\ttab\u0001\u001f',
      del: 'a\u007fb',
      latin: 'café naïve Ørsted Ω',
      numbers: [0, -1, 1999, 19.99, 0.5, 1e-4, 123456789012, -0.25, 1e-5, 0.000025, -3.5e-9, 2 ** 63, 1e21],
      flags: [true, false, null],
    },
  };

  for (const [name, value] of Object.entries(cases)) {
    test(`re-encodes byte for byte through a PHP-style decode/encode: ${name}`, () => {
      const encoded = canonicalJson(value);
      assert.match(encoded, /^[\x20-\x7f]*$/, 'only ASCII: every other character is escaped');
      assert.ok(!/(^|[^\\])(\\\\)*\\\//.test(encoded), 'slashes are not escaped');
      assert.equal(phpReencode(encoded), encoded);
      // And the text comes back unchanged, so a merchant reads what the customer typed.
      const back = JSON.parse(encoded) as Record<string, unknown>;
      for (const [key, original] of Object.entries(value as Record<string, unknown>)) {
        if (key === 'metadata' || key === 'nested' || key === 'items') continue;
        assert.deepEqual(back[key], original, key);
      }
    });
  }

  test('escapes non-ASCII as \\u with four lower-case hex digits, surrogate pairs as two escapes', () => {
    assert.equal(canonicalJson({ a: '张' }), '{"a":"\\u5f20"}');
    assert.equal(canonicalJson({ a: 'é/' }), '{"a":"\\u00e9/"}');
    assert.equal(canonicalJson({ a: '🎉' }), '{"a":"\\ud83c\\udf89"}');
    // PHP decodes {} to an empty array and encodes it as []: an empty object is sent as null.
    assert.equal(canonicalJson({ a: {}, b: [] }), '{"a":null,"b":[]}');
  });

  test('writes numbers as PHP writes them back: integers as they are, other floats with php_gcvt', () => {
    const cases: Array<[number, string]> = [
      [0, '0'],
      [-0, '0'],
      [1999, '1999'],
      [19.99, '19.99'],
      [0.0001, '0.0001'],
      [0.00012, '0.00012'],
      [0.00001, '1.0e-5'],
      [0.00001234, '1.234e-5'],
      [-2.5e-7, '-2.5e-7'],
      [5e-324, '5.0e-324'],
      [2 ** 53 + 2, '9007199254740994'],
      [2 ** 63, '9.223372036854776e+18'],
      [1e21, '1.0e+21'],
      [-1.5e300, '-1.5e+300'],
    ];
    for (const [value, expected] of cases) {
      assert.equal(canonicalJson({ n: value }), `{"n":${expected}}`, String(value));
      assert.equal(phpReencode(canonicalJson({ n: value })), `{"n":${expected}}`, String(value));
    }
  });

  test('a whole event body with non-ASCII payment fields survives the PHP re-encode', () => {
    const eventBody = canonicalJson({
      id: 'evt_1234567890123456789',
      apiVersion: 'v1',
      type: 'payment.succeeded',
      created: '2026-11-22T12:00:00.000Z',
      data: {
        description: '订单 – ünïcødé – طلب – 🎉',
        shipping: { firstName: 'Zoë', lastName: '李', address: { city: 'القاهرة', line2: '' } },
        lineItems: [{ name: 'Ласточка', amount: 19.99, images: ['https://x.example/i.png'] }],
        metadata: {},
      },
    });
    assert.equal(phpReencode(eventBody), eventBody);
    // A PHP verifier signs over its re-encoding; it matches the signature over the raw body.
    const requestTime = '2026-11-22T12:00:00';
    assert.equal(
      independentSignature(token, requestTime, phpReencode(eventBody)).toUpperCase(),
      signWebhook(token, requestTime, eventBody),
    );
  });
});

describe('endpoint event types (docs/webhooks.md#what-is-sent)', () => {
  test('endpoint_<group>.<group>_<action> for every docs/webhooks.md#event-codes code, the group in the case the code has', () => {
    assert.equal(endpointEventType('payment.succeeded'), 'endpoint_payment.payment_succeeded');
    assert.equal(endpointEventType('payment.requires_capture'), 'endpoint_payment.payment_requires_capture');
    assert.equal(endpointEventType('refund.pending'), 'endpoint_refund.refund_pending');
    assert.equal(endpointEventType('invoice.payment_succeeds'), 'endpoint_invoice.invoice_payment_succeeds');
    assert.equal(endpointEventType('Invoice.sent'), 'endpoint_Invoice.Invoice_sent');
    // docs/balances.md#payouts adds the four payout codes to the fifteen (docs/webhooks.md#event-codes), docs/disputes.md five dispute codes.
    assert.equal(endpointEventType('payout.paid'), 'endpoint_payout.payout_paid');
    assert.equal(endpointEventType('dispute.funds_withdrawn'), 'endpoint_dispute.dispute_funds_withdrawn');
    assert.equal(endpointEventType('payout.canceled'), 'endpoint_payout.payout_canceled');
    assert.equal(endpointEventTypes.length, 24);
    const forms = new Set(endpointEventTypes.map(([, form]) => form));
    assert.equal(forms.size, 24, 'one-to-one');
    for (const [code, form] of endpointEventTypes) {
      assert.match(form, /^endpoint_([A-Za-z]+)\.\1_[a-z_]+$/, code);
    }
  });
});
