import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startReceiver } from './helpers/receiver.js';
import { databaseKind, injectRaw, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';
import { assertScriptsUnderNonce } from './helpers/page-safety.js';

const cards = {
  good: '4242424242424242',
  declined: '4000000000000002',
  threeDSecure: '4000002500003155',
};

describe(`hosted checkout page (${databaseKind})`, () => {
  let ctx: TestContext;
  let shop: TestMerchant;

  before(async () => {
    ctx = await startTestApp();
    shop = await ctx.merchant({ name: 'Example <Shop>' });
  });
  after(async () => ctx.close());

  async function session(fields: Record<string, unknown> = {}) {
    const response = await shop.call('POST', '/checkout/session/create', {
      amountTotal: '2598',
      currency: 'USD',
      orderNo: `order-${Math.random()}`,
      lineItems: [{ name: 'T-shirt', amount: 12.99, currency: 'USD', quantity: 2 }],
      returnUrl: 'https://shop.example/done?order=1',
      cancelUrl: 'https://shop.example/cart',
      ...fields,
    });
    assert.equal(response.status, 200, response.raw);
    return response.body.data as { id: string; url: string };
  }

  const browse = (url: string) => {
    const target = new URL(url, 'http://localhost');
    return injectRaw(ctx, { method: 'GET', url: `${target.pathname}${target.search}` });
  };

  function postCard(id: string, card: Record<string, string>) {
    ctx.clock.advance(1);
    return injectRaw(ctx, {
      method: 'POST',
      url: `/checkout/${id}/pay`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ expiry: '12/30', securityCode: '123', name: 'Ada Lovelace', ...card }).toString(),
    });
  }

  const read = async (id: string) => (await shop.call('GET', `/checkout/session/${id}`)).body.data;

  test('the page shows the merchant and the order lines, cannot be framed and has no inline script', async () => {
    const { url } = await session();
    const page = await browse(url);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<h1>Example &lt;Shop&gt;<\/h1>/);
    assert.match(page.body, /T-shirt/);
    assert.match(page.body, /\$25\.98/);
    assert.deepEqual(assertScriptsUnderNonce(page.headers, page.body), [
      '/js/v1/card-input.js',
      '/js/v1/hosted-form.js',
    ]);
    assert.equal(page.headers['x-frame-options'], 'DENY');
    const csp = String(page.headers['content-security-policy']);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.match(csp, /default-src 'none'/);
  });

  test('a good card pays the session with its fields and returns to returnUrl with payment_id', async () => {
    const s = await session({ orderNo: 77001, preAuth: 'y', notifyUrl: 'https://shop.example/notify' });
    const posted = await postCard(s.id, { cardNo: '4242 4242 4242 4242' });
    assert.equal(posted.statusCode, 303, posted.body);
    const back = new URL(String(posted.headers.location));
    assert.equal(`${back.origin}${back.pathname}`, 'https://shop.example/done');
    assert.equal(back.searchParams.get('order'), '1');
    const paymentId = back.searchParams.get('payment_id')!;
    assert.match(paymentId, /^pt_\d{19}$/);
    const done = await read(s.id);
    assert.equal(done.status, 'complete');
    assert.equal(done.paymentId, paymentId);
    const payment = (await shop.call('GET', `/payment/${paymentId}`)).body.data;
    assert.equal(payment.amount, '2598');
    assert.equal(payment.orderNo, 77001);
    assert.equal(payment.preAuth, 'y');
    assert.equal(payment.status, 'requires_capture');
    assert.equal(payment.notifyUrl, 'https://shop.example/notify');
    const again = await browse(s.url);
    assert.match(again.body, /has been paid/);
    assert.doesNotMatch(again.body, /<form/);
  });

  test('a refused form names each field and never echoes the card number', async () => {
    const s = await session();
    const refused = await postCard(s.id, { cardNo: '4242 4242', securityCode: '1', expiry: '13/30' });
    assert.equal(refused.statusCode, 400);
    assert.match(refused.body, /id="cardNo-error"/);
    assert.match(refused.body, /id="securityCode-error"/);
    assert.match(refused.body, /id="expiry-error"/);
    assert.doesNotMatch(refused.body, /4242 4242|42424242/);
    const luhn = await postCard(s.id, { cardNo: '4242424242424241' });
    assert.match(luhn.body, /id="cardNo-error"/);
    assert.doesNotMatch(luhn.body, /4242424242424241/);
    assert.equal((await read(s.id)).status, 'open');
  });

  test('a declined card stays on the page with the reason, then a good card pays', async () => {
    const s = await session();
    const declined = await postCard(s.id, { cardNo: cards.declined });
    assert.equal(declined.statusCode, 200);
    assert.match(declined.body, /id="declined"/);
    assert.match(declined.body, /<form method="post"/);
    assert.doesNotMatch(declined.body, new RegExp(cards.declined));
    assert.equal((await read(s.id)).status, 'open');
    const paid = await postCard(s.id, { cardNo: cards.good });
    assert.equal(paid.statusCode, 303);
    assert.match(String(paid.headers.location), /^https:\/\/shop\.example\/done\?order=1&payment_id=pt_\d{19}$/);
    assert.equal((await read(s.id)).status, 'complete');
  });

  test('3-D Secure passes through the challenge page and back to returnUrl; a failed one stays', async () => {
    for (const outcome of ['fail', 'pass'] as const) {
      const s = await session({ returnUrl: 'https://shop.example/done' });
      const posted = await postCard(s.id, { cardNo: cards.threeDSecure });
      assert.equal(posted.statusCode, 303);
      const challenge = await browse(String(posted.headers.location));
      const action = /<form method="post" action="([^"]+)"/.exec(challenge.body)![1]!;
      const secret = /name="secret" value="([^"]+)"/.exec(challenge.body)![1]!;
      const answered = await injectRaw(ctx, {
        method: 'POST',
        url: action,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ secret: secret.replace(/&#95;/g, '_'), outcome }).toString(),
      });
      const back = await browse(String(answered.headers.location));
      if (outcome === 'pass') {
        assert.equal(back.statusCode, 303);
        assert.match(String(back.headers.location), /^https:\/\/shop\.example\/done\?payment_id=pt_\d{19}$/);
        assert.equal((await read(s.id)).status, 'complete');
      } else {
        assert.equal(back.statusCode, 200);
        assert.match(back.body, /id="declined"/);
        assert.equal((await read(s.id)).status, 'open');
      }
    }
  });

  test("the challenge page speaks the session's locale, whatever the browser's, and so does its answer", async () => {
    const s = await session({ locale: 'fr' });
    const posted = await postCard(s.id, { cardNo: cards.threeDSecure });
    assert.equal(posted.statusCode, 303);
    const location = new URL(String(posted.headers.location));
    assert.equal(location.searchParams.get('locale'), 'fr');
    const challenge = await injectRaw(ctx, {
      method: 'GET',
      url: `${location.pathname}${location.search}`,
      headers: { 'accept-language': 'de' },
    });
    assert.match(challenge.body, /<html lang="fr" dir="ltr">/);
    assert.match(challenge.body, /Votre banque vous demande de confirmer ce paiement/);
    const secret = /name="secret" value="([^"]+)"/.exec(challenge.body)![1]!;
    assert.match(challenge.body, /name="locale" value="fr"/);
    // A session left to the browser's language hands none on.
    const auto = await session();
    const autoPosted = await postCard(auto.id, { cardNo: cards.threeDSecure });
    assert.equal(new URL(String(autoPosted.headers.location)).searchParams.get('locale'), null);
    // A bad post (no outcome) answered in the same language.
    const refused = await injectRaw(ctx, {
      method: 'POST',
      url: location.pathname,
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'accept-language': 'de' },
      payload: new URLSearchParams({ secret: secret.replace(/&#95;/g, '_'), locale: 'fr' }).toString(),
    });
    assert.equal(refused.statusCode, 400);
    assert.match(refused.body, /Choisissez Valider ou Refuser/);
  });

  test('cancel goes to cancelUrl; an expired session takes no card', async () => {
    const s = await session();
    const cancel = await browse(`/checkout/${s.id}/cancel`);
    assert.equal(cancel.statusCode, 303);
    assert.equal(cancel.headers.location, 'https://shop.example/cart');
    await shop.call('POST', `/checkout/session/${s.id}/expire`);
    const posted = await postCard(s.id, { cardNo: cards.good });
    assert.equal(posted.statusCode, 303);
    assert.equal(posted.headers.location, `/checkout/${s.id}`);
    assert.match((await browse(s.url)).body, /expired/);
    assert.equal((await read(s.id)).paymentId, null);
    assert.equal((await browse('/checkout/cs_1234567890123456789')).statusCode, 404);
  });

  test('an unanswered 3-D Secure challenge gives way to a new card; the earlier payment is canceled', async () => {
    const s = await session();
    const first = await postCard(s.id, { cardNo: cards.threeDSecure });
    const abandoned = /\/3ds\/(pt_\d{19})/.exec(String(first.headers.location))![1]!;
    const page = await browse(s.url);
    assert.match(page.body, /<form method="post"/, 'the shopper may try another card');
    const paid = await postCard(s.id, { cardNo: cards.good });
    assert.equal(paid.statusCode, 303);
    const paymentId = new URL(String(paid.headers.location)).searchParams.get('payment_id');
    assert.notEqual(paymentId, abandoned);
    assert.equal((await shop.call('GET', `/payment/${abandoned}`)).body.data.status, 'canceled');
    assert.equal((await read(s.id)).paymentId, paymentId);
  });

  async function answerChallenge(location: string, outcome: 'pass' | 'fail') {
    const challenge = await browse(location);
    const action = /<form method="post" action="([^"]+)"/.exec(challenge.body)![1]!;
    const secret = /name="secret" value="([^"]+)"/.exec(challenge.body)![1]!;
    return injectRaw(ctx, {
      method: 'POST',
      url: action,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ secret: secret.replace(/&#95;/g, '_'), outcome }).toString(),
    });
  }

  test('a challenge passed by a shopper who never comes back still completes the session', async () => {
    const s = await session();
    const posted = await postCard(s.id, { cardNo: cards.threeDSecure });
    const paymentId = /\/3ds\/(pt_\d{19})/.exec(String(posted.headers.location))![1]!;
    await answerChallenge(String(posted.headers.location), 'pass');
    const seen = await read(s.id);
    assert.equal(seen.status, 'complete');
    assert.equal(seen.paymentId, paymentId);
  });

  test('a session expiring with a payment awaiting 3-D Secure cancels that payment', async () => {
    const at = new Date(ctx.clock.now().getTime() + 60 * 60 * 1000).toISOString();
    const s = await session({ expiresAt: at });
    const posted = await postCard(s.id, { cardNo: cards.threeDSecure });
    const paymentId = /\/3ds\/(pt_\d{19})/.exec(String(posted.headers.location))![1]!;
    ctx.clock.advance(60 * 60 * 1000);
    await ctx.runJobs();
    const seen = await read(s.id);
    assert.equal(seen.status, 'expired');
    assert.equal(seen.paymentId, null);
    assert.equal((await shop.call('GET', `/payment/${paymentId}`)).body.data.status, 'canceled');
  });

  test('the payment made on the page is announced to notifyUrl, and no log line holds the card', async () => {
    const receiver = await startReceiver();
    try {
      const s = await session({ notifyUrl: receiver.url('/notify') });
      const posted = await postCard(s.id, { cardNo: '4242 4242 4242 4242' });
      const paymentId = new URL(String(posted.headers.location)).searchParams.get('payment_id');
      await ctx.tessera.webhookDispatcher.runOnce();
      const [delivery] = await receiver.waitFor(1, 5000);
      assert.equal(delivery!.path, '/notify');
      const event = JSON.parse(delivery!.body);
      assert.match(event.type, /payment_succeeded$/);
      assert.ok(delivery!.body.includes(String(paymentId)), 'the event names the payment made on the page');
      assert.doesNotMatch(delivery!.body, /4242424242424242/);
      assert.ok(ctx.logLines().every((line) => !/4242424242424242|4242 4242/.test(line)));
    } finally {
      await receiver.close();
    }
  });

  test('two tabs posting at once: the session is paid once, by one payment', async () => {
    const s = await session({ orderNo: 'race-1' });
    const [a, b] = await Promise.all([postCard(s.id, { cardNo: cards.good }), postCard(s.id, { cardNo: cards.good })]);
    const toShop = [a, b].filter((r) => String(r.headers.location).startsWith('https://shop.example/'));
    assert.equal(toShop.length, 1, `${a.headers.location} ${b.headers.location}`);
    const payments = (await shop.call('GET', '/payment?orderNo=race-1')).body.data.data;
    assert.equal(payments.length, 1);
    assert.equal((await read(s.id)).paymentId, payments[0].id);
  });
});
