/**
 * The dashboard's dispute form at the HTTP level (docs/disputes.md#dashboard): each refusal — too
 * much text, a file too large or of the wrong type, a closed dispute, one past its dueBy, a form
 * without the session's CSRF token — shown beside its field (or above the form) with nothing stored.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseKind, startTestApp, type TestContext } from './helpers/harness.js';
import type { DashboardClient } from './helpers/dashboard.js';
import { disputeShop, sandboxDispute, type MerchantApi } from './helpers/dashboard-disputes.js';
import { maxFileBytes } from '../src/files/schemas.js';

const followUpDelayMs = 3000;
const password = 'correct horse battery';
const pdf = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');

interface Part {
  name: string;
  value: string | Buffer;
  filename?: string;
}

describe(`dashboard: the dispute form's refusals (${databaseKind})`, () => {
  let ctx: TestContext;
  let owner: DashboardClient;
  let merchantId: string;
  let api: MerchantApi;

  /** A payment with a sandbox dispute card, and its dispute once the follow-up delay has passed. */
  const disputeOf = async (cardNo: string) =>
    (await sandboxDispute(ctx, api, cardNo, { amount: '2000', followUpDelayMs })).dispute.id as string;

  /** The evidence form as a browser sends it: multipart, with the session's CSRF token unless told. */
  const postForm = async (disputeId: string, parts: Part[], csrf?: string) => {
    const page = await owner.get(`/dashboard/disputes/${disputeId}`);
    const token = csrf ?? /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
    const boundary = '----tessera-dashboard-boundary';
    const chunks: Buffer[] = [];
    for (const part of [{ name: '_csrf', value: token }, ...parts]) {
      const disposition = part.filename
        ? `form-data; name="${part.name}"; filename="${part.filename}"\r\nContent-Type: application/octet-stream`
        : `form-data; name="${part.name}"`;
      chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n\r\n`));
      chunks.push(Buffer.isBuffer(part.value) ? part.value : Buffer.from(part.value));
      chunks.push(Buffer.from('\r\n'));
    }
    chunks.push(Buffer.from(`--${boundary}--\r\n`));
    const answer = await ctx.tessera.server.inject({
      method: 'POST',
      url: `/dashboard/disputes/${disputeId}`,
      headers: {
        cookie: [...owner.cookies].map(([name, value]) => `${name}=${value}`).join('; '),
        'content-type': `multipart/form-data; boundary=${boundary}`,
      },
      payload: Buffer.concat(chunks),
    });
    return { status: answer.statusCode, body: answer.body };
  };

  const storedFiles = async () =>
    Number(
      (
        await ctx.tessera.db.query<{ count: string | number }>(
          'SELECT count(*) AS count FROM files WHERE merchant_id = $1',
          [merchantId],
        )
      )[0]!.count,
    );

  before(async () => {
    ctx = await startTestApp({
      followUpDelayMs,
      env: { TESSERA_SANDBOX_FOLLOW_UP_DELAY_MS: String(followUpDelayMs) },
    });
    ({ merchantId, owner, api } = await disputeShop(ctx, 'Refusals shop', 'owner@refusals.test', password));
  });
  after(() => ctx?.close());

  it('refuses more text than all fields may hold, and stores neither the text nor the file', async () => {
    const id = await disputeOf('4000000000000275');
    const filesBefore = await storedFiles();
    const answer = await postForm(id, [
      { name: 'productDescription', value: 'x'.repeat(150_001) },
      { name: 'receipt', value: pdf, filename: 'receipt.pdf' },
      { name: 'action', value: 'save' },
    ]);
    assert.equal(answer.status, 400, answer.body.slice(-800));
    assert.match(answer.body, /role="alert">evidence text fields may hold at most 150000 characters/);
    assert.equal((await api('GET', `/disputes/${id}`)).evidence.productDescription, null);
    assert.equal(await storedFiles(), filesBefore);
  });

  it('refuses a card number typed into an evidence field beside it, as the API does, stores nothing and never shows it back', async () => {
    const id = await disputeOf('4000000000000275');
    const filesBefore = await storedFiles();
    const answer = await postForm(id, [
      { name: 'uncategorizedText', value: 'Customer paid with 4242 4242 4242 4242 last week' },
      { name: 'receipt', value: pdf, filename: 'receipt.pdf' },
      { name: 'action', value: 'save' },
    ]);
    assert.equal(answer.status, 400, answer.body.slice(-800));
    assert.match(answer.body, /id="f-uncategorizedText-error">[^<]*card number/);
    assert.doesNotMatch(answer.body, /4242 4242 4242 4242|4242424242424242/);
    assert.equal((await api('GET', `/disputes/${id}`)).evidence.uncategorizedText, null);
    assert.equal(await storedFiles(), filesBefore);
  });

  it('refuses a file over 5 MB and one of the wrong type beside their fields; the good file is not stored', async () => {
    const id = await disputeOf('4000000000000275');
    const filesBefore = await storedFiles();
    const large = Buffer.concat([pdf, Buffer.alloc(maxFileBytes)]);
    const answer = await postForm(id, [
      { name: 'productDescription', value: 'Kept as typed' },
      { name: 'receipt', value: pdf, filename: 'receipt.pdf' },
      { name: 'shippingDocumentation', value: large, filename: 'large.pdf' },
      { name: 'refundPolicy', value: 'plain text', filename: 'policy.txt' },
      { name: 'action', value: 'submit' },
    ]);
    assert.equal(answer.status, 400);
    assert.match(answer.body, /id="f-shippingDocumentation-error">file must be at most 5 MB/);
    assert.match(answer.body, /id="f-refundPolicy-error">file must be a PDF, PNG or JPEG/);
    assert.match(answer.body, /Kept as typed<\/textarea/);
    const dispute = await api('GET', `/disputes/${id}`);
    assert.equal(dispute.status, 'needs_response');
    assert.equal(dispute.evidence.productDescription, null);
    assert.equal(await storedFiles(), filesBefore);
  });

  it('refuses a form without the session CSRF token (403), storing nothing', async () => {
    const id = await disputeOf('4000000000000275');
    const answer = await postForm(id, [{ name: 'productDescription', value: 'Forged' }], 'forged');
    assert.equal(answer.status, 403);
    assert.equal((await api('GET', `/disputes/${id}`)).evidence.productDescription, null);
  });

  it('accepts an inquiry, then shows no form and refuses evidence because it is closed', async () => {
    const id = await disputeOf('4000000000001976');
    const accepted = await owner.post(`/dashboard/disputes/${id}/accept`);
    assert.equal(accepted.status, 200);
    assert.match(accepted.body, /Dispute accepted: it is warning closed/);
    assert.doesNotMatch(accepted.body, /Submit evidence/);
    const answer = await postForm(id, [
      { name: 'productDescription', value: 'Too late' },
      { name: 'action', value: 'save' },
    ]);
    assert.equal(answer.status, 409);
    assert.match(answer.body, /its status is warning_closed/);
    assert.equal((await api('GET', `/disputes/${id}`)).evidence.productDescription, null);
  });

  it('lists the disputes soonest due first, each with the time left', async () => {
    const all = (await api('GET', '/disputes?limit=100')).data as Array<{
      id: string;
      evidenceDetails: { dueBy: string };
    }>;
    assert.ok(all.length >= 4);
    const soonest = [...all].sort((a, b) => Date.parse(a.evidenceDetails.dueBy) - Date.parse(b.evidenceDetails.dueBy));
    const page = await owner.get('/dashboard/disputes');
    const shown = [...page.body.matchAll(/href="\/dashboard\/disputes\/(dp_\d+)"/g)].map((match) => match[1]);
    assert.deepEqual(
      shown,
      soonest.map((dispute) => dispute.id),
    );
    assert.match(page.body, /7 days left/);
  });

  it('shows "past due" after dueBy and refuses evidence, naming dueBy', async () => {
    const id = await disputeOf('4000000000002685');
    ctx.clock.advance(8 * 24 * 60 * 60 * 1000);
    // The session has expired meanwhile: the Owner signs in again.
    await owner.get('/dashboard/sign-in');
    const signedIn = await owner.post('/dashboard/sign-in', { email: 'owner@refusals.test', password });
    assert.equal(signedIn.status, 303, signedIn.body);
    await owner.get('/dashboard');
    const list = await owner.get('/dashboard/disputes?status=needs_response');
    assert.match(list.body, new RegExp(`${id}[\\s\\S]*?past due`));
    const answer = await postForm(id, [
      { name: 'productDescription', value: 'Too late' },
      { name: 'action', value: 'submit' },
    ]);
    assert.equal(answer.status, 409);
    assert.match(answer.body, /after its dueBy/);
    const dispute = await api('GET', `/disputes/${id}`);
    assert.equal(dispute.evidence.productDescription, null);
    assert.equal(dispute.evidenceDetails.submissionCount, 0);
  });
});
