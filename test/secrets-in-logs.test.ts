/**
 * Secrets stay out of log lines by their names (src/redact.ts, docs/security.md "Secrets in logs"):
 * any query parameter, header or logged field whose name contains secret, token, password, key,
 * signature, authorization or cookie; and scripts/scan-logs.mjs fails a test run that logged one.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createLogger } from '../src/logger.js';
import { isSecretName, redactUrl } from '../src/redact.js';
import { injectRaw, startTestApp, type TestContext } from './helpers/harness.js';

describe('the redaction list', () => {
  test('a name is a secret when it contains one of the words, in any case and spelling', () => {
    for (const name of [
      'payment_client_secret',
      'clientSecret',
      'token',
      'access_token',
      'X-Api-Key',
      'apikey',
      'password',
      'Authorization',
      'Cookie',
      'webhookSignature',
    ]) {
      assert.ok(isSecretName(name), name);
    }
    for (const name of ['payment_id', 'lang', 'orderNo', 'amount', 'redirect_status']) {
      assert.equal(isSecretName(name), false, name);
    }
  });

  test('redactUrl masks the value of every secret-named query parameter and keeps the rest', () => {
    assert.equal(
      redactUrl('/checkout/cs_1/return?payment_id=pt_1&payment_client_secret=pt_1_secret_abc&api_key=k1'),
      '/checkout/cs_1/return?payment_id=pt_1&payment_client_secret=[redacted]&api_key=[redacted]',
    );
    assert.equal(redactUrl('/x?Access%5FToken=t'), '/x?Access%5FToken=[redacted]');
  });

  test('a logged object has each secret-named field masked, however deep, and keeps the others', () => {
    const lines: string[] = [];
    const logger = createLogger('info', { write: (line: string) => lines.push(line) });
    const original = {
      headers: { authorization: 'Bearer test_pr_abcdefgh12345678', 'x-request-id': 'r1' },
      endpoint: { url: 'https://shop.example/hook?token=tok-123&shop=1', webhookToken: 'whsec_abcdefgh12345678' },
      attempts: [{ password: 'hunter2', status: 500 }],
    };
    logger.info(original, 'something happened');
    const line = lines.join('');
    assert.doesNotMatch(line, /test_pr_abcdefgh|whsec_abcdefgh|hunter2|tok-123/);
    const fields = JSON.parse(line) as Record<string, any>;
    assert.equal(fields.headers.authorization, '[redacted]');
    assert.equal(fields.headers['x-request-id'], 'r1');
    assert.equal(fields.endpoint.url, 'https://shop.example/hook?token=[redacted]&shop=1');
    assert.equal(fields.endpoint.webhookToken, '[redacted]');
    assert.deepEqual(fields.attempts, [{ password: '[redacted]', status: 500 }]);
    assert.equal(original.headers.authorization, 'Bearer test_pr_abcdefgh12345678', 'the caller’s object is unchanged');
  });
});

describe('secrets in request log lines', () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await startTestApp();
  });
  after(() => ctx.close());

  test("the hosted checkout's 3-D Secure return URL does not log payment_client_secret", async () => {
    const start = ctx.logLines().length;
    await injectRaw(ctx, {
      method: 'GET',
      url: '/checkout/cs_1234567890123456789/return?payment_id=pt_1234567890123456789&payment_client_secret=pt_1234567890123456789_secret_q8Zk2',
    });
    const logged = ctx.logLines().slice(start).join('\n');
    assert.match(logged, /payment_client_secret=\[redacted\]/);
    assert.doesNotMatch(logged, /secret_q8Zk2/);
  });
});

describe('scripts/scan-logs.mjs', () => {
  function scan(lines: string[]): number | null {
    const dir = mkdtempSync(path.join(tmpdir(), 'tessera-scan-'));
    try {
      const filler = Array.from({ length: 120 }, (_, index) => `{"level":30,"msg":"line ${index}"}`);
      writeFileSync(path.join(dir, 'run.log'), [...filler, ...lines].join('\n'));
      return spawnSync(process.execPath, ['scripts/scan-logs.mjs', dir], { encoding: 'utf8' }).status;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  test('passes masked secrets and fails on each kind of unmasked one', () => {
    assert.equal(
      scan([
        '{"req":{"url":"/checkout/cs_1/return?payment_id=pt_1&payment_client_secret=[redacted]"}}',
        '{"headers":{"authorization":"[redacted]"},"msg":"ok"}',
      ]),
      0,
    );
    for (const line of [
      '{"req":{"url":"/checkout/cs_1/return?payment_client_secret=pt_1_secret_abc"}}',
      '{"req":{"url":"/x?lang=en&access_token=abc"}}',
      '{"headers":{"authorization":"Bearer abc"}}',
      '{"webhookToken":"abc"}',
      '{"msg":"key test_pr_abcdefgh12345678 was used"}',
      '{"msg":"token whsec_abcdefgh12345678"}',
    ]) {
      assert.equal(scan([line]), 1, line);
    }
  });
});
