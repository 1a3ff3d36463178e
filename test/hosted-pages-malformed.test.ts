/**
 * Issue 18: the pages a customer's browser opens without a key (hosted invoice and checkout pages)
 * answer a malformed path — a NUL character the database cannot store — with a 400 page, never a
 * 500 and never an error in the log.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { databaseKind, startTestApp, type TestContext } from './helpers/harness.js';

const malformed = [
  ['GET', '/invoice/re_%00?token=00'],
  ['GET', '/invoice/in_%00?token=00'],
  ['POST', '/invoice/in_%00/pay'],
  ['GET', '/checkout/cs_%00'],
  ['POST', '/checkout/cs_%00/pay'],
  ['GET', '/checkout/cs_%00/return'],
  ['GET', '/checkout/cs_%00/cancel'],
] as const;

describe(`hosted pages with a malformed path (${databaseKind})`, () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await startTestApp();
  });
  after(async () => ctx.close());

  for (const [method, url] of malformed) {
    test(`${method} ${url} answers a 400 page and logs no error`, async () => {
      const linesBefore = ctx.logLines().length;
      const response = await ctx.tessera.server.inject({
        method,
        url,
        ...(method === 'POST'
          ? { payload: 'cardNo=4242', headers: { 'content-type': 'application/x-www-form-urlencoded' } }
          : {}),
      });
      assert.equal(response.statusCode, 400, response.body);
      assert.match(String(response.headers['content-type']), /^text\/html/);
      assert.doesNotMatch(response.body, /Something went wrong/);
      const errors = ctx
        .logLines()
        .slice(linesBefore)
        .filter((line) => JSON.parse(line).level >= 50);
      assert.deepEqual(errors, []);
    });
  }
});
