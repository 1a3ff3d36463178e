/**
 * tessera.js and its card frame over HTTP (issue 14): the script's and the frame's headers, the
 * frame's CSP frame-ancestors from the merchant's website origins, and that setting by the
 * operator API and the dashboard (validation, roles, audit). The browser test is card-js-browser.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseKind, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';
import { assertInert, assertScriptsUnderNonce } from './helpers/page-safety.js';
import { acceptLink, dashboardClient, linkInMail, signedInOwner } from './helpers/dashboard.js';

describe(`tessera.js and the card frame (${databaseKind})`, () => {
  let ctx: TestContext;

  before(async () => {
    ctx = await startTestApp();
  });
  after(() => ctx?.close());

  const get = (url: string) => ctx.tessera.server.inject({ method: 'GET', url });
  const operator = (url: string, body: unknown) =>
    ctx.tessera.server.inject({
      method: 'POST',
      url: `/admin/v1${url}`,
      headers: { authorization: `Bearer ${ctx.operatorKey}`, 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
  const frameUrl = (merchant: TestMerchant, origin: string, key = merchant.publicKey) =>
    `/js/v1/card-frame?${new URLSearchParams({ key, origin, id: 'tessera-card-1-abc' })}`;
  const frameAncestors = (csp: unknown) => /frame-ancestors ([^;]+)/.exec(String(csp))?.[1];

  it('serves tessera.js as JavaScript that any page may load, cached briefly', async () => {
    const answer = await get('/js/v1/tessera.js');
    assert.equal(answer.statusCode, 200);
    assert.equal(answer.headers['content-type'], 'text/javascript; charset=utf-8');
    assert.equal(answer.headers['cache-control'], 'public, max-age=300');
    assert.equal(answer.headers['x-content-type-options'], 'nosniff');
    assert.equal(answer.headers['access-control-allow-origin'], '*');
    assert.match(answer.body, /window\.Tessera = Tessera/);
    for (const asset of [
      '/js/v1/card-frame.js',
      '/js/v1/card-frame.css',
      '/js/v1/card-input.js',
      '/js/v1/hosted-form.js',
    ]) {
      const file = await get(asset);
      assert.equal(file.statusCode, 200, asset);
      assert.match(String(file.headers['content-type']), asset.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
      assert.equal(file.headers['access-control-allow-origin'], undefined);
    }
  });

  it('serves the card frame without X-Frame-Options, without inline script, to any page in development', async () => {
    const merchant = await ctx.merchant();
    const answer = await get(frameUrl(merchant, 'http://127.0.0.1:8080'));
    assert.equal(answer.statusCode, 200, answer.body);
    assert.equal(answer.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(answer.headers['x-frame-options'], undefined);
    assert.equal(answer.headers['cache-control'], 'no-store');
    const csp = String(answer.headers['content-security-policy']);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.equal(frameAncestors(csp), '*');
    // Two scripts, files of Tessera's origin under the page's nonce; no inline script or event handler.
    assert.deepEqual(assertScriptsUnderNonce(answer.headers, answer.body), [
      '/js/v1/card-input.js',
      '/js/v1/card-frame.js',
    ]);
    assertInert(answer.body);
    assert.match(answer.body, /data-parent-origin="http:\/\/127\.0\.0\.1:8080"/);
  });

  it("speaks the shopper's language: tessera.js's locale, else Accept-Language, Arabic right to left", async () => {
    const merchant = await ctx.merchant();
    const frame = (locale?: string, acceptLanguage?: string) =>
      ctx.tessera.server.inject({
        method: 'GET',
        url: `${frameUrl(merchant, 'http://127.0.0.1:8080')}${locale ? `&locale=${locale}` : ''}`,
        headers: acceptLanguage ? { 'accept-language': acceptLanguage } : {},
      });
    const decodeEntities = (text: string) =>
      text
        .replace(/&#(\d+);/g, (_entity, code: string) => String.fromCharCode(Number(code)))
        .replace(/&quot;/g, '"')
        .replace(/&amp;/g, '&');
    /** The frame's language and direction, its card number label, and a message its script shows. */
    const spoken = (body: string) => {
      const messages = /data-messages="([^"]*)"/.exec(body)?.[1] ?? '';
      return {
        lang: /<html lang="([^"]+)" dir="([^"]+)">/.exec(body)?.slice(1, 3).join(' '),
        label: /<label for="cardNo">([^<]+)<\/label>/.exec(body)?.[1],
        missing: (JSON.parse(decodeEntities(messages)) as Record<string, string>).cardNumberMissing,
      };
    };
    assert.deepEqual(spoken((await frame()).body), {
      lang: 'en ltr',
      label: 'Card number',
      missing: 'Enter your card number.',
    });
    assert.deepEqual(spoken((await frame(undefined, 'de-CH,de;q=0.9,en;q=0.5')).body), {
      lang: 'de ltr',
      label: 'Kartennummer',
      missing: 'Geben Sie Ihre Kartennummer ein.',
    });
    // The locale tessera.js was given wins over the browser's languages.
    assert.deepEqual(spoken((await frame('ja', 'de')).body), {
      lang: 'ja ltr',
      label: 'カード番号',
      missing: 'カード番号を入力してください。',
    });
    assert.deepEqual(spoken((await frame(undefined, 'ar')).body), {
      lang: 'ar rtl',
      label: 'رقم البطاقة',
      missing: 'أدخل رقم بطاقتك.',
    });
  });

  it("writes mountCard's amount as the Pay button's label in the shopper's language, and refuses a bad one naming it", async () => {
    const merchant = await ctx.merchant();
    const frame = (extra: Record<string, string>, acceptLanguage = 'en') =>
      ctx.tessera.server.inject({
        method: 'GET',
        url: `${frameUrl(merchant, 'http://127.0.0.1:8080')}&${new URLSearchParams(extra)}`,
        headers: { 'accept-language': acceptLanguage },
      });
    const label = (body: string) => /data-pay-label="([^"]*)"/.exec(body)?.[1];
    assert.equal(label((await frame({ amount: '2500', currency: 'USD' })).body), 'Pay $25.00');
    assert.equal(label((await frame({ amount: '2500', currency: 'eur' }, 'de')).body), '25,00\u00a0€ bezahlen');
    assert.equal(label((await frame({ amount: '1200', currency: 'JPY', locale: 'ja' })).body), '￥1,200を支払う');
    assert.equal(label((await frame({})).body), undefined, 'no amount, no label');
    for (const [extra, rule] of [
      [{ amount: '25.00', currency: 'USD' }, /amount must be a whole number of minor units/],
      [{ amount: '2500', currency: 'XYZ' }, /currency must be an ISO 4217 code/],
      [{ currency: 'USD' }, /amount must be a whole number/],
    ] as const) {
      const refused = await frame(extra);
      assert.equal(refused.statusCode, 400, JSON.stringify(extra));
      assert.match(refused.body, rule);
    }
  });

  it("lists exactly the merchant's website origins in frame-ancestors, and refuses another page's origin", async () => {
    const merchant = await ctx.merchant();
    const set = await operator(`/merchants/${merchant.id}/update`, {
      websiteOrigins: ['https://shop.example', 'http://127.0.0.1:8080'],
    });
    assert.equal(set.statusCode, 200, set.body);
    assert.deepEqual(set.json().data.websiteOrigins, ['https://shop.example', 'http://127.0.0.1:8080']);
    const allowed = await get(frameUrl(merchant, 'https://shop.example'));
    assert.equal(allowed.statusCode, 200);
    assert.equal(
      frameAncestors(allowed.headers['content-security-policy']),
      'https://shop.example http://127.0.0.1:8080',
    );
    const other = await get(frameUrl(merchant, 'https://evil.example'));
    assert.equal(other.statusCode, 403);
    assert.match(other.body, /origin is not one of the merchant&#39;s website origins/);
    assert.doesNotMatch(other.body, /card-frame\.js/);
    assert.equal(
      frameAncestors(other.headers['content-security-policy']),
      'https://shop.example http://127.0.0.1:8080',
    );
    // Emptied again: any page, since this is the sandbox in development.
    await operator(`/merchants/${merchant.id}/update`, { websiteOrigins: [] });
    assert.equal(
      frameAncestors((await get(frameUrl(merchant, 'https://evil.example'))).headers['content-security-policy']),
      '*',
    );
  });

  it('refuses a private key, an unknown key and a malformed origin, never echoing the key', async () => {
    const merchant = await ctx.merchant();
    for (const key of [merchant.privateKey, `test_pu_${'x'.repeat(40)}`, 'nonsense']) {
      const answer = await get(frameUrl(merchant, 'https://shop.example', key));
      assert.equal(answer.statusCode, 400);
      assert.equal(frameAncestors(answer.headers['content-security-policy']), "'none'");
      assert.ok(!answer.body.includes(key));
      assert.match(answer.body, /valid public key/);
    }
    const bad = await get(frameUrl(merchant, 'https://shop.example/path'));
    assert.equal(bad.statusCode, 403);
  });

  it('keeps the hosted checkout page unframeable', async () => {
    const merchant = await ctx.merchant();
    const session = await merchant.call('POST', '/checkout/session/create', {
      amountTotal: '1000',
      currency: 'USD',
      returnUrl: 'https://shop.example/done',
    });
    assert.equal(session.status, 200, session.raw);
    const pageAnswer = await get(new URL(session.body.data.url).pathname);
    assert.equal(pageAnswer.statusCode, 200);
    assert.equal(pageAnswer.headers['x-frame-options'], 'DENY');
    assert.equal(frameAncestors(pageAnswer.headers['content-security-policy']), "'none'");
  });

  it('validates website origins: origin only, http or https, no duplicates, at most 20', async () => {
    const merchant = await ctx.merchant();
    const refusals: Array<[unknown, string, RegExp]> = [
      [['https://shop.example/'], 'websiteOrigins[0]', /must be an origin such as https:\/\/shop\.example/],
      [['https://shop.example', 'https://shop.example/checkout'], 'websiteOrigins[1]', /no path/],
      [['ftp://shop.example'], 'websiteOrigins[0]', /http or https/],
      [['https://Shop.example'], 'websiteOrigins[0]', /must be an origin/],
      [['https://shop.example:443'], 'websiteOrigins[0]', /must be an origin/],
      [['shop.example'], 'websiteOrigins[0]', /must be an origin/],
      [['https://a.example', 'https://a.example'], 'websiteOrigins[1]', /repeats https:\/\/a\.example/],
      [['https://shop.example?x=1'], 'websiteOrigins[0]', /must be an origin/],
      [Array.from({ length: 21 }, (_, index) => `https://s${index}.example`), 'websiteOrigins', /at most 20/],
      ['https://shop.example', 'websiteOrigins', /array/],
    ];
    for (const [origins, param, message] of refusals) {
      const answer = await operator(`/merchants/${merchant.id}/update`, { websiteOrigins: origins });
      assert.equal(answer.statusCode, 400, `${JSON.stringify(origins)}: ${answer.body}`);
      assert.equal(answer.json().code, 'invalid_request');
      assert.equal(answer.json().data.param, param, answer.body);
      assert.match(answer.json().msg, message);
    }
    const kept = await operator(`/merchants/${merchant.id}/update`, {
      websiteOrigins: ['https://shop.example:8443', 'http://localhost:3000'],
    });
    assert.equal(kept.statusCode, 200, kept.body);
    const read = await ctx.tessera.server.inject({
      method: 'GET',
      url: `/admin/v1/merchants/${merchant.id}`,
      headers: { authorization: `Bearer ${ctx.operatorKey}` },
    });
    assert.deepEqual(read.json().data.websiteOrigins, ['https://shop.example:8443', 'http://localhost:3000']);
  });

  it('lets an Owner or Administrator set the origins in the dashboard (audited), and nobody else', async () => {
    const merchant = await ctx.merchant();
    const password = 'correct horse battery';
    const owner = await signedInOwner(ctx, merchant.id, 'owner@cardjs.test', password);
    const shown = await owner.get('/dashboard/settings');
    assert.equal(shown.status, 200);
    assert.match(shown.body, /Website origins/);
    const refused = await owner.post('/dashboard/settings/website', {
      websiteOrigins: 'https://shop.example\nhttps://shop.example/pay',
    });
    assert.equal(refused.status, 400);
    assert.match(refused.body, /id="f-websiteOrigins-error">websiteOrigins\[1\] must be an origin/);
    assert.match(refused.body, /https:\/\/shop\.example\/pay<\/textarea>/);
    const saved = await owner.post('/dashboard/settings/website', {
      websiteOrigins: ' https://shop.example \r\n\r\nhttp://127.0.0.1:8080\n',
    });
    assert.equal(saved.status, 200, saved.body);
    assert.match(saved.body, /Website origins saved \(2\)/);
    const frame = await get(frameUrl(merchant, 'https://shop.example'));
    assert.equal(
      frameAncestors(frame.headers['content-security-policy']),
      'https://shop.example http://127.0.0.1:8080',
    );
    const audited = await ctx.tessera.db.query<{ action: string }>(
      "SELECT action FROM audit_log WHERE merchant_id = $1 AND action = 'merchant.website_origins_updated'",
      [merchant.id],
    );
    assert.equal(audited.length, 1);

    for (const role of ['administrator', 'developer', 'analyst', 'support'] as const) {
      const email = `${role}@cardjs.test`;
      const invited = await owner.post('/dashboard/team/invite', { email, name: role, role });
      assert.equal(invited.status, 200, invited.body);
      const member = dashboardClient(ctx);
      assert.equal((await acceptLink(member, linkInMail(ctx, email), password)).status, 303);
      const allowed = role === 'administrator';
      assert.equal((await member.get('/dashboard/settings')).status, allowed ? 200 : 403, role);
      const posted = await member.post('/dashboard/settings/website', { websiteOrigins: 'https://other.example' });
      assert.equal(posted.status, allowed ? 200 : 403, role);
      assert.equal(/href="\/dashboard\/settings"/.test((await member.get('/dashboard/payments')).body), allowed, role);
    }
  });
});
