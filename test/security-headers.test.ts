/**
 * The headers of each family of routes (docs/security.md, "Headers"): nosniff on every answer,
 * no-store on every API answer (they carry keys, tokens and client secrets), a CSP with form-action
 * and base-uri on every page, and HSTS on every answer when the public URL is https.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  apiBase,
  databaseKind,
  injectRaw,
  startTestApp,
  type TestContext,
  type TestMerchant,
} from './helpers/harness.js';

type Headers = Record<string, string | string[] | number | undefined>;
interface Family {
  name: string;
  /** An API answer (JSON): no-store. */
  api?: boolean;
  /** A page (HTML): a CSP with form-action and base-uri. */
  page?: boolean;
  get(): Promise<{ status: number; headers: Headers }>;
}

async function familiesOf(ctx: TestContext, shop: TestMerchant): Promise<Family[]> {
  const asOperator = { authorization: `Bearer ${ctx.operatorKey}` };
  const inject = async (options: Parameters<typeof injectRaw>[1]) => {
    const response = await injectRaw(ctx, options);
    return { status: response.statusCode, headers: response.headers as Headers };
  };
  const method = await shop.call('POST', '/payment_methods/create', {
    type: 'card',
    card: { cardNo: '4000002500003155', expMonth: '12', expYear: '2030', securityCode: '123' },
  });
  const challenged = await shop.call('POST', '/payment/create', {
    amount: '1000',
    currency: 'USD',
    paymentMethod: method.body.data.id,
    confirm: true,
    returnUrl: 'https://shop.example/done',
  });
  assert.equal(challenged.body.data?.status, 'requires_action', challenged.raw);
  const challenge = new URL(challenged.body.data.nextAction.redirectToUrl as string);
  const session = await shop.call('POST', '/checkout/session/create', {
    amountTotal: '1000',
    currency: 'USD',
    returnUrl: 'https://shop.example/done',
  });
  const checkout = new URL(session.body.data.url as string);
  return [
    {
      name: 'merchant API answer',
      api: true,
      get: async () => {
        const response = await shop.call('GET', '/payment?limit=1');
        return { status: response.status, headers: response.headers };
      },
    },
    {
      name: 'merchant API answer with a client secret (payment create)',
      api: true,
      get: async () => ({ status: challenged.status, headers: challenged.headers }),
    },
    {
      name: 'merchant API refusal',
      api: true,
      get: () => inject({ method: 'GET', url: `${apiBase}/payment/pt_1`, headers: {} }),
    },
    {
      name: 'operator API: merchant create (answers keys)',
      api: true,
      get: () =>
        inject({ method: 'POST', url: '/admin/v1/merchants/create', headers: asOperator, payload: { name: 'Keys' } }),
    },
    {
      name: 'operator API: roll_keys (answers keys)',
      api: true,
      get: () => inject({ method: 'POST', url: `/admin/v1/merchants/${shop.id}/roll_keys`, headers: asOperator }),
    },
    { name: 'health', get: () => inject({ method: 'GET', url: '/health/live' }) },
    { name: 'unknown route', get: () => inject({ method: 'GET', url: '/no/such/thing' }) },
    { name: 'API reference page', page: true, get: () => inject({ method: 'GET', url: '/docs' }) },
    {
      name: '3-D Secure challenge page',
      page: true,
      get: () => inject({ method: 'GET', url: `${challenge.pathname}${challenge.search}` }),
    },
    {
      name: '3-D Secure page, not found',
      page: true,
      get: () => inject({ method: 'GET', url: '/3ds/pt_1234567890123456789?secret=nope' }),
    },
    {
      name: 'hosted checkout page',
      page: true,
      get: () => inject({ method: 'GET', url: `${checkout.pathname}${checkout.search}` }),
    },
    {
      name: 'hosted invoice page, not found',
      page: true,
      get: () => inject({ method: 'GET', url: '/invoice/in_1234567890123456789?token=nope' }),
    },
    { name: 'dashboard sign-in page', page: true, get: () => inject({ method: 'GET', url: '/dashboard/sign-in' }) },
    { name: 'tessera.js', get: () => inject({ method: 'GET', url: '/js/v1/tessera.js' }) },
  ];
}

function policyOf(headers: Headers): Map<string, string> {
  const policy = String(headers['content-security-policy'] ?? '');
  return new Map(
    policy
      .split(';')
      .map((directive) => directive.trim().split(/\s+/))
      .filter((parts) => parts[0])
      .map((parts) => [parts[0]!, parts.slice(1).join(' ')]),
  );
}

for (const https of [false, true]) {
  describe(`security headers by route family, ${https ? 'https' : 'http'} public URL (${databaseKind})`, () => {
    let ctx: TestContext;
    let shop: TestMerchant;
    before(async () => {
      ctx = await startTestApp(https ? { env: { TESSERA_PUBLIC_URL: 'https://pay.example' } } : {});
      shop = await ctx.merchant();
    });
    after(() => ctx.close());

    test('every family answers with its headers', async () => {
      const missing: string[] = [];
      for (const family of await familiesOf(ctx, shop)) {
        const { status, headers } = await family.get();
        const lack = (what: string) => missing.push(`${family.name} (${status}): ${what}`);
        if (headers['x-content-type-options'] !== 'nosniff') lack('nosniff');
        const hsts = headers['strict-transport-security'];
        if (https && hsts !== 'max-age=31536000') lack('HSTS');
        if (!https && hsts !== undefined) lack('no HSTS over http');
        if (family.api && headers['cache-control'] !== 'no-store') lack('Cache-Control: no-store');
        if (family.page) {
          const policy = policyOf(headers);
          if (!policy.has('form-action')) lack('CSP form-action');
          if (policy.get('base-uri') !== "'none'") lack("CSP base-uri 'none'");
        }
      }
      assert.deepEqual(missing, []);
    });

    test("the 3-D Secure page's forms may post to Tessera and be sent on to the payment's returnUrl only", async () => {
      // A merchant of its own: the first test rolled the keys of `shop`.
      const families = await familiesOf(ctx, await ctx.merchant());
      const page = families.find((family) => family.name === '3-D Secure challenge page')!;
      const { status, headers } = await page.get();
      assert.equal(status, 200);
      assert.equal(policyOf(headers).get('form-action'), "'self' https://shop.example");
    });
  });
}
