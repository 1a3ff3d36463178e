/**
 * The Balance pages in a real browser (Debian's chromium through playwright-core): the Owner
 * changes the payout schedule and the bank account after typing their password again, and the
 * pictures of docs/balances.md are taken here, so they show what ships.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Browser, type Page } from 'playwright-core';
import { startTestApp, storeIndependent, type TestContext } from './helpers/harness.js';
import { launchChromium, picturesNotTaken } from './helpers/browser.js';
import { fitsDeskAndPhone, seriousViolations } from './helpers/axe.js';

const docImages = 'docs/images';
const password = 'correct horse battery';
const startedMs = Date.now();

describe('balance pages in a browser', { skip: storeIndependent }, () => {
  let ctx: TestContext;
  let browser: Browser;
  let page: Page;
  let base: string;
  let privateKey: string;
  let merchantId: string;

  const inject = async (method: 'GET' | 'POST', url: string, key: string, body?: unknown) => {
    const answer = await ctx.tessera.server.inject({
      method,
      url,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    assert.equal(answer.statusCode, 200, answer.body);
    return answer.json().data;
  };
  const api = (path: string, body?: unknown) =>
    inject(body === undefined ? 'GET' : 'POST', `/api/services/v1${path}`, privateKey, body);
  const operatorView = () => inject('GET', `/admin/v1/merchants/${merchantId}`, ctx.operatorKey);

  before(async () => {
    ctx = await startTestApp();
    await ctx.tessera.server.listen({ port: 0, host: '127.0.0.1' });
    base = ctx.tessera.publicUrl();
    const created = await inject('POST', '/admin/v1/merchants/create', ctx.operatorKey, {
      name: 'Balance shop',
      ownerEmail: 'owner@balance.test',
    });
    privateKey = created.keys.privateKey;
    merchantId = created.id;
    await inject('POST', `/admin/v1/merchants/${merchantId}/update`, ctx.operatorKey, {
      availabilityDays: 0,
      payoutSchedule: { interval: 'daily' },
      bankAccount: {
        holderName: 'Balance Shop LLC',
        accountNumber: '000123456789',
        routingNumber: '110000000',
        currency: 'USD',
      },
    });
    for (const [amount, orderNo] of [
      ['1999', 'order-1001'],
      ['5000', 'order-1002'],
    ] as const) {
      ctx.clock.advance(60_000);
      const method = await api('/payment_methods/create', {
        type: 'card',
        card: { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' },
      });
      await api('/payment/create', { amount, currency: 'USD', confirm: true, paymentMethod: method.id, orderNo });
    }
    // The schedule's payout of both, sent and paid.
    ctx.clock.advance(60_000);
    await ctx.runJobs();
    ctx.clock.advance(10_000);
    await ctx.runJobs();
    // Money in since, for the available balance.
    const method = await api('/payment_methods/create', {
      type: 'card',
      card: { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    await api('/payment/create', { amount: '2500', currency: 'USD', confirm: true, paymentMethod: method.id });
    // A balance in a currency without a bank account: not paid out, and the page says why.
    const euro = await api('/payment_methods/create', {
      type: 'card',
      card: { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    await api('/payment/create', { amount: '4000', currency: 'EUR', confirm: true, paymentMethod: euro.id });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(created.ownerSetPasswordUrl);
    await page.getByLabel('New password').fill(password);
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.getByRole('heading', { name: 'Home' }).waitFor();
  });
  after(async () => {
    await browser?.close();
    await ctx?.close();
  });

  it("shows the balance and a payout's reconciliation", async () => {
    await page.goto(`${base}/dashboard/balance`);
    await page.getByRole('heading', { name: 'Balance', exact: true }).waitFor();
    const shown = await page.locator('main').innerText();
    assert.match(shown, /daily/);
    assert.match(shown, /USD to account •••• 6789/);
    assert.match(shown, /Not paid out: no EUR bank account/);
    assert.deepEqual(await seriousViolations(page), []);
    await page.screenshot({ path: `${docImages}/dashboard-balance.png`, fullPage: true });
    await fitsDeskAndPhone(page);
    await page.locator('a[href^="/dashboard/payouts/po_"]').first().click();
    await page.getByRole('heading', { name: 'Reconciliation' }).waitFor();
    const report = await page.locator('main').innerText();
    assert.match(report, /order-1001/);
    assert.match(report, /order-1002/);
    assert.deepEqual(await seriousViolations(page), []);
    await page.screenshot({ path: `${docImages}/dashboard-payout.png`, fullPage: true });
    await fitsDeskAndPhone(page);
  });

  it('lets the Owner change the schedule and the bank account only with their password, checked as the API checks it', async () => {
    await page.goto(`${base}/dashboard/balance`);
    await page.getByRole('link', { name: 'Change the payout schedule or bank account' }).click();
    await page.getByRole('heading', { name: 'Payout settings' }).waitFor();
    await page.getByLabel('Pay out').selectOption('weekly');
    await page.getByLabel('Day of the week (weekly)').selectOption('friday');
    await page.getByLabel('Account holder').fill('Balance Shop LLC');
    await page.getByLabel('Account number').fill('000987654321');
    await page.getByLabel('Routing number').fill('110000000');
    await page.getByLabel('Currency', { exact: true }).fill('USD');
    assert.deepEqual(await seriousViolations(page), []);
    await page.screenshot({ path: `${docImages}/dashboard-payout-settings.png`, fullPage: true });
    await fitsDeskAndPhone(page);

    // A wrong password: refused beside the field, nothing saved, the account number not shown back.
    await page.getByLabel('Your password').fill('not my password');
    await page.getByRole('button', { name: 'Save payout settings' }).click();
    assert.match(await page.locator('#f-password-error').innerText(), /not your password/);
    assert.equal(await page.getByLabel('Account number').inputValue(), '');
    assert.equal((await operatorView()).payoutSchedule.interval, 'daily');

    // The right password, a routing number whose checksum fails: the API's refusal, beside its field.
    await page.getByLabel('Account number').fill('000987654321');
    await page.getByLabel('Routing number').fill('123456789');
    await page.getByLabel('Your password').fill(password);
    await page.getByRole('button', { name: 'Save payout settings' }).click();
    assert.match(await page.locator('[id="f-bankAccount.routingNumber-error"]').innerText(), /ABA checksum/);
    assert.deepEqual(
      (await operatorView()).bankAccounts.map((row: { accountNumberLast4: string }) => row.accountNumberLast4),
      ['6789'],
    );

    await page.getByLabel('Account number').fill('000987654321');
    await page.getByLabel('Routing number').fill('110000000');
    await page.getByLabel('Your password').fill(password);
    await page.getByRole('button', { name: 'Save payout settings' }).click();
    await page.getByRole('heading', { name: 'Balance', exact: true }).waitFor();
    const shown = await page.locator('body').innerText();
    assert.match(shown, /Payout settings saved/);
    assert.match(shown, /weekly \(friday\)/);
    assert.match(shown, /USD to account •••• 4321/);
    assert.ok(!(await page.content()).includes('000987654321'), 'the account number is shown masked only');
    const saved = await operatorView();
    assert.deepEqual(saved.payoutSchedule, { interval: 'weekly', weeklyAnchor: 'friday', monthlyAnchor: null });
    assert.deepEqual(
      saved.bankAccounts.map((row: { accountNumberLast4: string }) => row.accountNumberLast4),
      ['4321'],
    );
  });

  it('has taken, in this run, every picture docs/balances.md shows', () => {
    assert.deepEqual(
      picturesNotTaken('docs/balances.md', startedMs, () => true),
      [],
    );
  });
});
