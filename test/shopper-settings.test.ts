/**
 * The API side of what shoppers see (issue 22): a checkout session's `locale` (answered, validated,
 * used by the page), and the merchant's brand colour and logo (validated, answered, shown).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { databaseKind, injectRaw, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';

describe(`shopper language and branding (${databaseKind})`, () => {
  let ctx: TestContext;
  let shop: TestMerchant;
  before(async () => {
    ctx = await startTestApp();
    shop = await ctx.merchant({ name: 'Lovelace Tea Co.' });
  });
  after(async () => ctx?.close());

  const session = (extra: Record<string, unknown>) =>
    shop.call('POST', '/checkout/session/create', {
      amountTotal: '3150',
      currency: 'EUR',
      returnUrl: 'https://shop.example/done',
      ...extra,
    });
  const updateMerchant = (body: Record<string, unknown>) =>
    ctx.tessera.server.inject({
      method: 'POST',
      url: `/admin/v1/merchants/${shop.id}/update`,
      headers: { authorization: `Bearer ${ctx.operatorKey}`, 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });

  test("a session's locale is answered and decides the page's language over Accept-Language", async () => {
    const created = await session({ locale: 'ja' });
    assert.equal(created.status, 200, created.raw);
    assert.equal(created.body.data.locale, 'ja');
    const url = new URL(created.body.data.url);
    const page = await injectRaw(ctx, { method: 'GET', url: url.pathname, headers: { 'accept-language': 'de' } });
    assert.match(page.body, /<html lang="ja" dir="ltr">/);
    assert.match(page.body, /￥|€/);
    assert.match(page.body, />€31\.50を支払う</);
  });

  test('without a locale the browser decides: Arabic is right to left; auto is answered', async () => {
    const created = await session({});
    assert.equal(created.body.data.locale, 'auto');
    const url = new URL(created.body.data.url);
    const page = await injectRaw(ctx, {
      method: 'GET',
      url: url.pathname,
      headers: { 'accept-language': 'ar-EG,ar;q=0.9' },
    });
    assert.match(page.body, /<html lang="ar" dir="rtl">/);
    assert.match(page.body, /رقم البطاقة/);
  });

  test('an unknown locale is refused with a 400 naming locale', async () => {
    const refused = await session({ locale: 'xx-YY' });
    assert.equal(refused.status, 400, refused.raw);
    assert.equal(refused.body.data.param, 'locale');
  });

  test('the brand colour and logo are validated, answered, and shown with the logo origin allowed by the CSP', async () => {
    const badColor = await updateMerchant({ brandColor: 'red' });
    assert.equal(badColor.statusCode, 400, badColor.body);
    assert.equal(JSON.parse(badColor.body).data.param, 'brandColor');
    const badLogo = await updateMerchant({ logoUrl: 'http://shop.example/logo.png' });
    assert.equal(badLogo.statusCode, 400, badLogo.body);
    assert.equal(JSON.parse(badLogo.body).data.param, 'logoUrl');

    const set = await updateMerchant({ brandColor: '#FFCC00', logoUrl: 'https://cdn.shop.example/logo.png' });
    assert.equal(set.statusCode, 200, set.body);
    assert.equal(JSON.parse(set.body).data.brandColor, '#ffcc00');
    const created = await session({});
    const page = await injectRaw(ctx, { method: 'GET', url: new URL(created.body.data.url).pathname });
    assert.match(page.body, /--brand:#ffcc00;--on-brand:#000000/);
    assert.match(page.body, /<img src="https:\/\/cdn\.shop\.example\/logo\.png" alt="" \/>/);
    assert.match(String(page.headers['content-security-policy']), /img-src https:\/\/cdn\.shop\.example(;|$)/);

    const cleared = await updateMerchant({ brandColor: '', logoUrl: '' });
    assert.equal(JSON.parse(cleared.body).data.logoUrl, null);
    assert.equal(JSON.parse(cleared.body).data.brandColor, null);
    const plain = await injectRaw(ctx, { method: 'GET', url: new URL(created.body.data.url).pathname });
    assert.doesNotMatch(plain.body, /<img/);
    assert.doesNotMatch(String(plain.headers['content-security-policy']), /img-src/);
  });
});
