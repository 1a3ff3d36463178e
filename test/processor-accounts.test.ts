/**
 * Processor accounts and live keys through the operator and merchant APIs (docs/processors.md):
 * connecting an account, its sealed credentials, refusals that name the field, one enabled
 * account per mode, live keys only beside an enabled live account.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { apiBase, injectRaw, startTestApp, type TestContext } from './helpers/harness.js';

const adyenCredentials = {
  apiKey: 'AQEyhmfxK4zJbBZDw0m/n3Q5qf3VYp5eHZJTfEA0SnT87bqlfCj7EMFdWw2+5HzctViMSCJMYAc=-Qx7VhlWh3s8x3ZsTo4ndK5Ww6CV',
  merchantAccount: 'ShopExampleECOM',
  hmacKey: '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056',
};
const stripeCredentials = {
  secretKey: 'sk_live_51HxT8sKq2Ztq8ZgQ0xYhJp3n1VvQ9a7aBcDeFgHiJkLmNoPqRsTuVwXyZ',
  webhookSecret: 'whsec_9fQ2rT7vXk1LmN3pB8sD4gH6jW0yZ5cA2eR7tU1iO3pK9sL4',
};

describe('processor accounts and live keys', () => {
  let context: TestContext;
  before(async () => {
    context = await startTestApp();
  });
  after(async () => context?.close());

  const operator = async (method: 'GET' | 'POST', url: string, body?: unknown) => {
    const answer = await injectRaw(context, {
      method,
      url: `/admin/v1${url}`,
      headers: {
        authorization: `Bearer ${context.operatorKey}`,
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      ...(body ? { payload: JSON.stringify(body) } : {}),
    });
    return { status: answer.statusCode, headers: answer.headers, raw: answer.body, body: JSON.parse(answer.body) };
  };
  const liveAdyen = {
    processor: 'adyen',
    mode: 'live',
    credentials: adyenCredentials,
    baseUrl: 'https://1797a841fbb37ca7-ShopExample-checkout-live.adyenpayments.com/checkout/v71',
  };

  test('connects an account: credentials sealed, shown only as a hint, and the webhook URL to enter', async () => {
    const merchant = await context.merchant();
    const created = await operator('POST', `/merchants/${merchant.id}/processor_accounts/create`, liveAdyen);
    assert.equal(created.status, 200, created.raw);
    const account = created.body.data;
    assert.match(account.id, /^pa_\d{19}$/);
    assert.equal(account.processor, 'adyen');
    assert.equal(account.mode, 'live');
    assert.equal(account.status, 'enabled');
    assert.equal(account.credentialsHint, `…${adyenCredentials.apiKey.slice(-4)}`);
    assert.equal(account.baseUrl, liveAdyen.baseUrl);
    assert.match(account.webhookUrl, new RegExp(`/processor_webhooks/${account.id}$`));
    assert.equal(account.lastNotificationAt, null);
    assert.equal(created.headers['cache-control'], 'no-store');
    const listed = await operator('GET', `/merchants/${merchant.id}/processor_accounts`);
    assert.deepEqual(listed.body.data.data, [account]);
    for (const secret of Object.values(adyenCredentials).filter((value) => value.length > 20)) {
      assert.ok(!created.raw.includes(secret) && !listed.raw.includes(secret), 'a credential was answered');
      assert.ok(!context.logLines().some((line) => line.includes(secret)), 'a credential was logged');
    }
  });

  test('refuses malformed accounts naming the field, and writes nothing', async () => {
    const merchant = await context.merchant();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...liveAdyen, processor: 'worldpay' }, 'processor'],
      [{ ...liveAdyen, mode: 'production' }, 'mode'],
      [
        { ...liveAdyen, credentials: { apiKey: adyenCredentials.apiKey, merchantAccount: 'Shop' } },
        'credentials.hmacKey',
      ],
      [{ ...liveAdyen, credentials: { ...adyenCredentials, hmacKey: 'not hex' } }, 'credentials.hmacKey'],
      [{ ...liveAdyen, credentials: { ...adyenCredentials, password: 'x' } }, 'credentials.password'],
      [{ ...liveAdyen, baseUrl: 'not a url' }, 'baseUrl'],
      [{ ...liveAdyen, baseUrl: 'ftp://example.com/v71' }, 'baseUrl'],
      [{ processor: 'adyen', mode: 'live', credentials: adyenCredentials }, 'baseUrl'],
      [
        {
          processor: 'stripe',
          mode: 'live',
          credentials: { ...stripeCredentials, secretKey: stripeCredentials.secretKey.replace('_live_', '_test_') },
        },
        'credentials.secretKey',
      ],
      [
        { processor: 'stripe', mode: 'test', credentials: { ...stripeCredentials, webhookSecret: 'secret' } },
        'credentials.webhookSecret',
      ],
    ];
    for (const [body, param] of cases) {
      const refused = await operator('POST', `/merchants/${merchant.id}/processor_accounts/create`, body);
      assert.equal(refused.status, 400, `${param}: ${refused.raw}`);
      assert.equal(refused.body.data.param, param, refused.raw);
      assert.ok(!refused.raw.includes(adyenCredentials.apiKey) && !refused.raw.includes(stripeCredentials.secretKey));
    }
    const listed = await operator('GET', `/merchants/${merchant.id}/processor_accounts`);
    assert.deepEqual(listed.body.data.data, []);
    const missing = await operator('POST', '/merchants/mer_1000000000000000001/processor_accounts/create', liveAdyen);
    assert.equal(missing.status, 404);
  });

  test('keeps one enabled account per mode: a second is refused until the first is disabled', async () => {
    const merchant = await context.merchant();
    const first = await operator('POST', `/merchants/${merchant.id}/processor_accounts/create`, liveAdyen);
    const second = await operator('POST', `/merchants/${merchant.id}/processor_accounts/create`, {
      processor: 'stripe',
      mode: 'live',
      credentials: stripeCredentials,
    });
    assert.equal(second.status, 409, second.raw);
    assert.equal(second.body.code, 'processor_account_exists');
    assert.equal(second.body.data.accountId, first.body.data.id);
    const disabled = await operator('POST', `/processor_accounts/${first.body.data.id}/update`, { status: 'disabled' });
    assert.equal(disabled.status, 200, disabled.raw);
    assert.equal(disabled.body.data.status, 'disabled');
    const again = await operator('POST', `/merchants/${merchant.id}/processor_accounts/create`, {
      processor: 'stripe',
      mode: 'live',
      credentials: stripeCredentials,
    });
    assert.equal(again.status, 200, again.raw);
    const reenabled = await operator('POST', `/processor_accounts/${first.body.data.id}/update`, { status: 'enabled' });
    assert.equal(reenabled.status, 409);
    const badStatus = await operator('POST', `/processor_accounts/${first.body.data.id}/update`, { status: 'paused' });
    assert.equal(badStatus.status, 400);
    assert.equal(badStatus.body.data.param, 'status');
    const rotated = await operator('POST', `/processor_accounts/${again.body.data.id}/update`, {
      credentials: { ...stripeCredentials, secretKey: `${stripeCredentials.secretKey.slice(0, -4)}WXYZ` },
    });
    assert.equal(rotated.body.data.credentialsHint, '…WXYZ');
  });

  test('issues live keys only beside an enabled live account, and refuses live payments without one', async () => {
    const merchant = await context.merchant();
    const refused = await operator('POST', `/merchants/${merchant.id}/roll_keys`, { mode: 'live' });
    assert.equal(refused.status, 409, refused.raw);
    assert.equal(refused.body.code, 'no_live_processor');
    const badMode = await operator('POST', `/merchants/${merchant.id}/roll_keys`, { mode: 'prod' });
    assert.equal(badMode.status, 400);
    assert.equal(badMode.body.data.param, 'mode');

    const account = await operator('POST', `/merchants/${merchant.id}/processor_accounts/create`, liveAdyen);
    const rolled = await operator('POST', `/merchants/${merchant.id}/roll_keys`, { mode: 'live' });
    assert.equal(rolled.status, 200, rolled.raw);
    assert.equal(rolled.headers['cache-control'], 'no-store');
    assert.match(rolled.body.data.keys.privateKey, /^live_pr_/);
    assert.match(rolled.body.data.keys.publicKey, /^live_pu_/);
    const live = async (method: 'GET' | 'POST', url: string, body?: unknown) => {
      const answer = await injectRaw(context, {
        method,
        url: `${apiBase}${url}`,
        headers: {
          authorization: `Bearer ${rolled.body.data.keys.privateKey}`,
          ...(body ? { 'content-type': 'application/json' } : {}),
        },
        ...(body ? { payload: JSON.stringify(body) } : {}),
      });
      return { status: answer.statusCode, raw: answer.body, body: JSON.parse(answer.body) };
    };
    // The test keys still work, and live and test objects stay apart.
    const testPayment = await merchant.call('POST', '/payment/create', { amount: '100', currency: 'USD' });
    assert.equal(testPayment.status, 200, testPayment.raw);
    assert.equal((await live('GET', `/payment/${testPayment.body.data.id}`)).status, 404);

    // A live payment created while the account is enabled, to be confirmed after it is disabled.
    const unconfirmed = await live('POST', '/payment/create', { amount: '100', currency: 'USD' });
    assert.equal(unconfirmed.status, 200, unconfirmed.raw);
    await operator('POST', `/processor_accounts/${account.body.data.id}/update`, { status: 'disabled' });
    const method = await live('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    const confirmed = await live('POST', `/payment/${unconfirmed.body.data.id}/confirm`, {
      paymentMethod: method.body.data.id,
    });
    assert.equal(confirmed.status, 409, confirmed.raw);
    assert.equal(confirmed.body.code, 'no_live_processor');
    assert.equal(
      (await live('GET', `/payment/${unconfirmed.body.data.id}`)).body.data.status,
      'requires_payment_method',
    );
    // Each process re-reads what a key resolves to within a second; this one forgot it at once.
    const payment = await live('POST', '/payment/create', { amount: '100', currency: 'USD' });
    assert.equal(payment.status, 409, payment.raw);
    assert.equal(payment.body.code, 'no_live_processor');
    assert.deepEqual(
      (await live('GET', '/payment')).body.data.data.map((payment: { id: string }) => payment.id),
      [unconfirmed.body.data.id],
    );
  });
});
