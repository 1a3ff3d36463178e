import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { logFormat } from '../src/config.js';
import { createLogger, prettyDestination } from '../src/logger.js';

describe('service log format', () => {
  test('readable lines only on a terminal in development; JSON lines on a pipe, in production and in tests', () => {
    assert.equal(logFormat('development', true), 'pretty');
    assert.equal(logFormat('development', false), 'json');
    assert.equal(logFormat('production', true), 'json');
    assert.equal(logFormat('production', false), 'json');
    assert.equal(logFormat('test', true), 'json');
    assert.equal(logFormat('test', false), 'json');
  });

  test('a readable line names the level and message, and card data and keys stay masked in it', async () => {
    let written = '';
    const logger = createLogger('info', await prettyDestination(false, { write: (text: string) => (written += text) }));
    logger.info(
      {
        payment: { cardNo: '4242424242424242', securityCode: '123' },
        req: { method: 'GET', url: '/v1/customers', headers: { authorization: 'Bearer test_pr_secret' } },
      },
      'request completed',
    );
    assert.match(written, /INFO.*request completed/);
    assert.doesNotMatch(written.trim(), /^\{/, 'a readable line, not JSON');
    assert.match(written, /\/v1\/customers/);
    assert.doesNotMatch(written, /4242424242424242|securityCode: "123"|test_pr_secret/);
  });
});
