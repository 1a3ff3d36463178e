/**
 * Outside production, webhooks reach loopback and public addresses; other private ranges only with
 * TESSERA_WEBHOOK_ALLOW_PRIVATE=on (said at start); cloud metadata never (docs/security.md,
 * "Private addresses"). Through the API, on the endpoint URL and a payment's notifyUrl.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { databaseKind, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';

for (const allowPrivate of [false, true]) {
  describe(`webhook addresses outside production, TESSERA_WEBHOOK_ALLOW_PRIVATE=${allowPrivate ? 'on' : 'off'} (${databaseKind})`, () => {
    let ctx: TestContext;
    let merchant: TestMerchant;
    before(async () => {
      ctx = await startTestApp(allowPrivate ? { env: { TESSERA_WEBHOOK_ALLOW_PRIVATE: 'on' } } : {});
      merchant = await ctx.merchant();
    });
    after(() => ctx.close());

    const create = (url: string) => merchant.call('POST', '/webhook_endpoints/create', { url });

    test('cloud metadata is refused, naming the field, and nothing is written', async () => {
      const before = (await merchant.call('GET', '/webhook_endpoints')).body.data.data.length;
      for (const url of [
        'http://169.254.169.254/latest/meta-data/',
        'http://[fd00:ec2::254]/',
        'http://100.100.100.200/',
      ]) {
        const response = await create(url);
        assert.equal(response.status, 400, response.raw);
        assert.equal(response.body.data.param, 'url');
        assert.match(response.body.msg, /^url is a cloud metadata address, which webhooks may never reach$/);
      }
      const payment = await merchant.call('POST', '/payment/create', {
        amount: '1000',
        currency: 'USD',
        notifyUrl: 'http://2852039166/latest',
      });
      assert.equal(payment.status, 400, payment.raw);
      assert.equal(payment.body.data.param, 'notifyUrl');
      assert.equal((await merchant.call('GET', '/webhook_endpoints')).body.data.data.length, before);
    });

    test('loopback is taken in every spelling', async () => {
      for (const url of [
        'http://127.0.0.1:4000/hooks',
        'http://2130706433:4000/hooks',
        'http://[::ffff:127.0.0.1]:4000/',
      ]) {
        const response = await create(url);
        assert.equal(response.status, 200, `${url}: ${response.raw}`);
      }
    });

    test(`another private address is ${allowPrivate ? 'taken' : 'refused, naming the setting'}`, async () => {
      const response = await create('http://10.0.0.5/hooks');
      if (allowPrivate) {
        assert.equal(response.status, 200, response.raw);
      } else {
        assert.equal(response.status, 400, response.raw);
        assert.equal(response.body.data.param, 'url');
        assert.match(response.body.msg, /TESSERA_WEBHOOK_ALLOW_PRIVATE=on/);
      }
    });

    test(`the start ${allowPrivate ? 'says' : 'does not say'} that private addresses are open`, () => {
      const said = ctx.logLines().some((line) => line.includes('TESSERA_WEBHOOK_ALLOW_PRIVATE=on'));
      assert.equal(said, allowPrivate);
    });
  });
}
