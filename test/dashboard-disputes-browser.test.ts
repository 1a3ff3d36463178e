/**
 * Disputes in the dashboard, in a real browser (Debian's chromium through playwright-core;
 * docs/disputes.md, docs/dashboard.md#pages): a sandbox dispute card's chargeback in the list with
 * the time left, evidence staged with a file and refused beside its field, submitted with
 * `winning_evidence` and won; an Analyst reads without a form, a Developer gets 403.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { databaseKind, startTestApp, type TestContext } from './helpers/harness.js';
import { dashboardClient, linkInMail } from './helpers/dashboard.js';
import { disputeShop, sandboxDispute, type DisputeShop, type MerchantApi } from './helpers/dashboard-disputes.js';
import { launchChromium, picturesNotTaken } from './helpers/browser.js';
import { fitsDeskAndPhone, seriousViolations } from './helpers/axe.js';

const docImages = 'docs/images';
const password = 'correct horse battery';
const followUpDelayMs = 3000;
const startedMs = Date.now();
const pdf = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');

describe(`disputes in the dashboard, in a browser (${databaseKind})`, () => {
  let ctx: TestContext;
  let browser: Browser;
  let base: string;
  let api: MerchantApi;
  let paymentId: string;
  let disputeId: string;
  const pages = new Map<string, Page>();

  /** The follow-up delay passes and the sandbox's jobs run (the dispute opens, or is decided). */
  const later = async () => {
    ctx.clock.advance(followUpDelayMs);
    await ctx.runJobs();
  };

  /** A member of `role` signed in in a browser of their own. */
  const signedIn = async (
    role: 'administrator' | 'analyst' | 'developer',
    owner: ReturnType<typeof dashboardClient>,
  ) => {
    const email = `${role}@disputes.test`;
    const invited = await owner.post('/dashboard/team/invite', { email, name: `The ${role}`, role });
    assert.equal(invited.status, 200, invited.body);
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(linkInMail(ctx, email));
    await page.getByLabel('New password').fill(password);
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.getByRole('heading', { name: 'Home' }).waitFor();
    pages.set(role, page);
  };

  before(async () => {
    ctx = await startTestApp({
      followUpDelayMs,
      env: { TESSERA_SANDBOX_FOLLOW_UP_DELAY_MS: String(followUpDelayMs) },
    });
    await ctx.tessera.server.listen({ port: 0, host: '127.0.0.1' });
    base = ctx.tessera.publicUrl();
    let owner: DisputeShop['owner'];
    ({ owner, api } = await disputeShop(ctx, 'Dispute shop', 'owner@disputes.test', password));
    browser = await launchChromium();
    for (const role of ['administrator', 'analyst', 'developer'] as const) await signedIn(role, owner);
    // docs/disputes.md, Sandbox: 4000000000000275 is a fraudulent chargeback, opened after the delay.
    let dispute;
    ({ paymentId, dispute } = await sandboxDispute(ctx, api, '4000000000000275', { amount: '4999', followUpDelayMs }));
    assert.equal(dispute?.status, 'needs_response');
    disputeId = dispute.id;
  });
  after(async () => {
    await browser?.close();
    await ctx?.close();
  });

  it('lists the dispute, soonest due first, with the time left written on the server', async () => {
    const page = pages.get('administrator')!;
    await page.getByRole('link', { name: 'Disputes' }).first().click();
    await page.getByRole('heading', { name: 'Disputes' }).waitFor();
    const row = page.getByRole('row').filter({ hasText: disputeId });
    assert.match(await row.innerText(), /49\.99 USD/);
    assert.match(await row.innerText(), new RegExp(paymentId));
    assert.match(await row.innerText(), /Fraudulent/);
    assert.match(await row.innerText(), /Chargeback/);
    assert.match(await row.innerText(), /Needs response/);
    // dueBy is 7 days after the dispute opened (docs/disputes.md, Rehearsal).
    assert.match(await row.innerText(), /7 days left/);
    assert.deepEqual(await seriousViolations(page), []);
    await page.screenshot({ path: `${docImages}/dashboard-disputes.png`, fullPage: true });
  });

  it('links the payment page to its dispute', async () => {
    const page = pages.get('administrator')!;
    await page.goto(`${base}/dashboard/payments/${paymentId}`);
    await page.getByRole('heading', { name: 'Disputes' }).waitFor();
    await page.getByRole('link', { name: disputeId }).click();
    await page.getByRole('heading', { name: 'Staged evidence' }).waitFor();
  });

  it('refuses a file that is not a PDF, PNG or JPEG beside its field and saves nothing', async () => {
    const page = pages.get('administrator')!;
    await page.getByLabel('Product description').fill('A typed description');
    await page
      .getByLabel('Customer communication')
      .setInputFiles({ name: 'mail.txt', mimeType: 'application/pdf', buffer: Buffer.from('not a pdf at all') });
    await page.getByRole('button', { name: 'Save' }).click();
    const error = page.locator('#f-customerCommunication-error');
    assert.match(await error.innerText(), /PDF, PNG or JPEG/);
    // What was typed stays in the form; nothing was staged.
    assert.equal(await page.getByLabel('Product description').inputValue(), 'A typed description');
    const dispute = await api('GET', `/disputes/${disputeId}`);
    assert.equal(dispute.evidence.productDescription, null);
    assert.equal(dispute.evidence.customerCommunication, null);
  });

  it('stages evidence with a file, then submits it with winning_evidence: the dispute is won', async () => {
    const page = pages.get('administrator')!;
    await page.goto(`${base}/dashboard/disputes/${disputeId}`);
    await page.getByLabel('Product description').fill('Tea, shipped on 20 November with tracking');
    await page.getByLabel('Receipt').setInputFiles({ name: 'receipt.pdf', mimeType: 'application/pdf', buffer: pdf });
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Evidence saved.').waitFor();
    const staged = await api('GET', `/disputes/${disputeId}`);
    assert.equal(staged.status, 'needs_response');
    assert.equal(staged.evidence.productDescription, 'Tea, shipped on 20 November with tracking');
    assert.match(staged.evidence.receipt, /^file_/);
    // The staged file opens from the dashboard, for the members who read disputes.
    const file = await page.request.get(`${base}/dashboard/files/${staged.evidence.receipt}/contents`);
    assert.equal(file.status(), 200);
    assert.deepEqual(await file.body(), pdf);
    await fitsDeskAndPhone(page);
    await page.screenshot({ path: `${docImages}/dashboard-dispute.png`, fullPage: true });

    await page.getByLabel('Uncategorized text').fill('winning_evidence: the signed delivery receipt');
    await page.getByRole('button', { name: 'Submit evidence' }).click();
    await page.getByText('Evidence submitted: the dispute is under review.').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Submit evidence' }).count(), 0);
    await later();
    await page.reload();
    assert.match(await page.getByRole('heading', { level: 1 }).innerText(), /Won/);
    assert.match(await page.getByRole('table', { name: 'Balance transactions' }).innerText(), /dispute_reversal/);
    assert.equal((await api('GET', `/disputes/${disputeId}`)).status, 'won');
  });

  it('shows an Analyst the dispute without any form or button', async () => {
    const page = pages.get('analyst')!;
    await page.getByRole('link', { name: 'Disputes' }).first().click();
    await page.getByRole('link', { name: disputeId }).click();
    await page.getByRole('heading', { name: 'Staged evidence' }).waitFor();
    assert.match(await page.locator('dl.evidence').innerText(), /winning_evidence/);
    assert.equal(await page.locator('main form').count(), 0);
    for (const name of ['Save', 'Submit evidence', 'Accept dispute']) {
      assert.equal(await page.getByRole('button', { name }).count(), 0, name);
    }
  });

  it('gives a Developer neither the navigation entry nor the pages (403)', async () => {
    const page = pages.get('developer')!;
    await page.goto(`${base}/dashboard`);
    assert.equal(await page.getByRole('link', { name: 'Disputes' }).count(), 0);
    for (const path of ['/dashboard/disputes', `/dashboard/disputes/${disputeId}`]) {
      const answer = await page.goto(`${base}${path}`);
      assert.equal(answer?.status(), 403, path);
      await page.getByRole('heading', { name: 'Not allowed' }).waitFor();
    }
  });

  it('has taken, in this run, the dashboard pictures docs/disputes.md shows', () => {
    assert.deepEqual(
      picturesNotTaken('docs/disputes.md', startedMs, (name) => name.startsWith('dashboard-')),
      [],
    );
  });
});
