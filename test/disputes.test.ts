/**
 * Disputes (docs/disputes.md): the sandbox's dispute cards, the dispute object, the money it
 * withdraws and reinstates, evidence and files, and refunds that race a chargeback.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  databaseKind,
  injectRaw,
  apiBase,
  startTestApp,
  type TestContext,
  type TestMerchant,
} from './helpers/harness.js';
import { getData as get, payByCard } from './helpers/balance.js';

const followUpDelayMs = 3000;
const dayMs = 24 * 60 * 60 * 1000;
const pdf = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');

describe(`disputes (${databaseKind})`, () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await startTestApp({ followUpDelayMs, env: { TESSERA_SANDBOX_FOLLOW_UP_DELAY_MS: String(followUpDelayMs) } });
  });
  after(() => ctx.close());

  const pay = (merchant: TestMerchant, cardNo: string, amount = '10000') => payByCard(merchant, { amount, cardNo });

  async function disputesOf(merchant: TestMerchant, paymentId: string) {
    return (await get(merchant, `/disputes?paymentId=${paymentId}`)).data as Array<Record<string, any>>;
  }

  /** The follow-up delay passes and the sandbox's jobs run. */
  async function later() {
    ctx.clock.advance(followUpDelayMs);
    await ctx.runJobs();
  }

  function upload(merchant: TestMerchant, bytes: Buffer, purpose = 'dispute_evidence', filename = 'receipt.pdf') {
    const boundary = '----tessera-test-boundary';
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\n${purpose}\r\n`),
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      ),
      bytes,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    return injectRaw(ctx, {
      method: 'POST',
      url: `${apiBase}/files`,
      headers: {
        authorization: `Bearer ${merchant.privateKey}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
      },
      payload: body,
    });
  }

  test('a fraudulent card: the chargeback opens later, withdraws amount and fee, the payment shows it', async () => {
    const merchant = await ctx.merchant();
    const payment = await pay(merchant, '4000000000000275');
    assert.deepEqual(await disputesOf(merchant, payment.id), []);
    await later();
    const [dispute] = await disputesOf(merchant, payment.id);
    assert.ok(dispute);
    assert.match(dispute.id, /^dp_\d{19}$/);
    assert.equal(dispute.reason, 'fraudulent');
    assert.equal(dispute.stage, 'chargeback');
    assert.equal(dispute.status, 'needs_response');
    assert.equal(dispute.amount, '10000');
    assert.equal(dispute.isChargeRefundable, false);
    assert.equal(dispute.evidenceDetails.submissionCount, 0);
    assert.equal(dispute.evidenceDetails.hasEvidence, false);
    assert.equal(dispute.evidenceDetails.pastDue, false);
    assert.equal(dispute.balanceTransactions.length, 1);
    const [entry] = dispute.balanceTransactions;
    assert.equal(entry.type, 'dispute');
    assert.equal(entry.amount, '-10000');
    assert.equal(entry.fee, '1500');
    assert.equal(entry.net, '-11500');
    assert.equal(entry.feeDetails[0].type, 'dispute_fee');
    const shown = await get(merchant, `/payment/${payment.id}`);
    assert.equal(shown.displayStatus, 'disputed');
    assert.deepEqual(shown.disputes, [dispute.id]);
    assert.equal(shown.amountDisputed, '10000');
    // Nothing is left to refund while the chargeback holds it all.
    const refund = await merchant.call('POST', '/refunds/create', { paymentId: payment.id, amount: '1' });
    assert.equal(refund.status, 400, refund.raw);
    assert.equal(refund.body.code, 'amount_too_large');
    assert.match(refund.body.msg, /held by a dispute/);
    const events = await get(merchant, `/events?objectId=${dispute.id}`);
    assert.deepEqual(
      // Both in one transaction, so of one time: the sequence gives their order.
      events.data
        .map((event: { type: string; sequence: number }) => [event.type, event.sequence])
        .sort((a: [string, number], b: [string, number]) => a[1] - b[1]),
      [
        ['dispute.created', 1],
        ['dispute.funds_withdrawn', 2],
      ],
    );
    // Another merchant does not see it.
    const other = await ctx.merchant();
    assert.equal((await other.call('GET', `/disputes/${dispute.id}`)).status, 404);
  });

  test('Owners and Administrators are e-mailed when a dispute opens, and 3 days before dueBy', async () => {
    const merchant = await ctx.merchant();
    await ctx.tessera.db.transaction((tx) => ctx.tessera.team.createOwner(tx, merchant.id, 'owner@disputes.test'));
    const payment = await pay(merchant, '4000000000000275');
    const mails = () => ctx.tessera.mail.kept().filter((message) => message.to === 'owner@disputes.test');
    const before = mails().length;
    await later();
    // The e-mail is a job of its own, scheduled when the dispute opened.
    await ctx.runJobs();
    const [opened] = mails().slice(before);
    assert.ok(opened, 'an e-mail when the dispute opens');
    assert.match(opened.subject, /A payment was disputed \(test mode\): fraudulent/);
    assert.match(opened.raw, new RegExp(payment.id));
    assert.doesNotMatch(opened.raw, /4000000000000275/);
    ctx.clock.advance(4 * dayMs + 1000);
    await ctx.runJobs();
    const reminder = mails().slice(before)[1];
    assert.ok(reminder, 'a reminder 3 days before dueBy');
    assert.match(reminder.subject, /is due in 3 days/);
  });

  test('evidence with winning_evidence wins: the amount comes back, the fee stays', async () => {
    const merchant = await ctx.merchant();
    const payment = await pay(merchant, '4000000000002685');
    await later();
    const [dispute] = await disputesOf(merchant, payment.id);
    assert.equal(dispute!.reason, 'product_not_received');
    const file = await upload(merchant, pdf);
    assert.equal(file.statusCode, 200, file.body);
    const fileObject = JSON.parse(file.body).data;
    assert.match(fileObject.id, /^file_\d{19}$/);
    assert.deepEqual(
      { purpose: fileObject.purpose, type: fileObject.type, size: fileObject.size, filename: fileObject.filename },
      { purpose: 'dispute_evidence', type: 'pdf', size: pdf.length, filename: 'receipt.pdf' },
    );
    const contents = await injectRaw(ctx, {
      method: 'GET',
      url: `${apiBase}/files/${fileObject.id}/contents`,
      headers: { authorization: `Bearer ${merchant.privateKey}` },
    });
    assert.equal(contents.statusCode, 200);
    assert.deepEqual(contents.rawPayload, pdf);
    const other = await ctx.merchant();
    const foreign = await injectRaw(ctx, {
      method: 'GET',
      url: `${apiBase}/files/${fileObject.id}/contents`,
      headers: { authorization: `Bearer ${other.privateKey}` },
    });
    assert.equal(foreign.statusCode, 404);

    const staged = await merchant.call('POST', `/disputes/${dispute!.id}/update`, {
      evidence: { productDescription: 'A lamp', receipt: fileObject.id },
    });
    assert.equal(staged.status, 200, staged.raw);
    assert.equal(staged.body.data.status, 'needs_response');
    assert.equal(staged.body.data.evidence.receipt, fileObject.id);
    assert.equal(staged.body.data.evidenceDetails.hasEvidence, true);
    const submitted = await merchant.call('POST', `/disputes/${dispute!.id}/update`, {
      evidence: { uncategorizedText: 'winning_evidence' },
      submit: true,
    });
    assert.equal(submitted.body.data.status, 'under_review', submitted.raw);
    assert.equal(submitted.body.data.evidenceDetails.submissionCount, 1);
    assert.equal(submitted.body.data.evidence.productDescription, 'A lamp');
    const again = await merchant.call('POST', `/disputes/${dispute!.id}/update`, { evidence: { customerName: 'x' } });
    assert.equal(again.status, 409);
    assert.equal(again.body.code, 'dispute_not_open');
    assert.match(again.body.msg, /under_review/);
    await later();
    const won = await get(merchant, `/disputes/${dispute!.id}`);
    assert.equal(won.status, 'won');
    assert.deepEqual(
      won.balanceTransactions.map((entry: { type: string; net: string }) => [entry.type, entry.net]),
      [
        ['dispute', '-11500'],
        ['dispute_reversal', '10000'],
      ],
    );
    assert.equal((await get(merchant, `/payment/${payment.id}`)).amountDisputed, '0');
    const balance = await get(merchant, '/balance');
    const pending = BigInt(balance.pending.find((line: { currency: string }) => line.currency === 'USD').amount);
    const available = BigInt(
      balance.available.find((line: { currency: string }) => line.currency === 'USD')?.amount ?? 0,
    );
    // 10000 less the payment fee (2.9 % + 30 = 320), less the dispute fee.
    assert.equal(pending + available, 10000n - 320n - 1500n);
  });

  test('an inquiry withdraws nothing and may be refunded; the twice-disputed card opens two', async () => {
    const merchant = await ctx.merchant();
    const inquiryPayment = await pay(merchant, '4000000000001976');
    const twice = await pay(merchant, '4000000404000079');
    await later();
    const [inquiry] = await disputesOf(merchant, inquiryPayment.id);
    assert.equal(inquiry!.stage, 'inquiry');
    assert.equal(inquiry!.status, 'warning_needs_response');
    assert.equal(inquiry!.isChargeRefundable, true);
    assert.deepEqual(inquiry!.balanceTransactions, []);
    const refund = await merchant.call('POST', '/refunds/create', { paymentId: inquiryPayment.id, amount: '500' });
    assert.equal(refund.status, 200, refund.raw);
    const both = await disputesOf(merchant, twice.id);
    assert.deepEqual(both.map((dispute) => dispute.stage).sort(), ['chargeback', 'inquiry']);
    const accepted = await merchant.call('POST', `/disputes/${inquiry!.id}/accept`, {});
    assert.equal(accepted.body.data.status, 'warning_closed', accepted.raw);
  });

  test('evidence past dueBy, over the text limit, naming a file of another merchant or of a bad type: refused, nothing written', async () => {
    const merchant = await ctx.merchant();
    const payment = await pay(merchant, '4000000000000275');
    await later();
    const [dispute] = await disputesOf(merchant, payment.id);
    const tooMuch = await merchant.call('POST', `/disputes/${dispute!.id}/update`, {
      evidence: { productDescription: 'a'.repeat(100_000), uncategorizedText: 'b'.repeat(50_001) },
    });
    assert.equal(tooMuch.status, 400, tooMuch.raw);
    assert.match(tooMuch.body.msg, /150000 characters/);
    // Evidence is free text: a card number in it is refused (docs/decisions/0045-card-numbers-in-free-text.md).
    const card = await merchant.call('POST', `/disputes/${dispute!.id}/update`, {
      evidence: { uncategorizedText: 'paid with 4242 4242 4242 4242' },
    });
    assert.equal(card.status, 400, card.raw);
    assert.doesNotMatch(card.raw, /4242 4242/);
    const other = await ctx.merchant();
    const foreign = JSON.parse((await upload(other, pdf)).body).data;
    const named = await merchant.call('POST', `/disputes/${dispute!.id}/update`, {
      evidence: { customerName: 'Kept?', receipt: foreign.id },
    });
    assert.equal(named.status, 404, named.raw);
    assert.equal((await get(merchant, `/disputes/${dispute!.id}`)).evidence.customerName, null);
    const text = await upload(merchant, Buffer.from('plain text, not a pdf'));
    assert.equal(text.statusCode, 400);
    assert.match(JSON.parse(text.body).msg, /PDF, PNG or JPEG/);
    const big = await upload(merchant, Buffer.concat([pdf, Buffer.alloc(5 * 1024 * 1024)]));
    assert.equal(big.statusCode, 400, big.body);
    assert.match(JSON.parse(big.body).msg, /5 MB/);
    ctx.clock.advance(8 * dayMs);
    const late = await merchant.call('POST', `/disputes/${dispute!.id}/update`, { evidence: { customerName: 'x' } });
    assert.equal(late.status, 409, late.raw);
    assert.match(late.body.msg, /dueBy/);
    const shown = await get(merchant, `/disputes/${dispute!.id}`);
    assert.equal(shown.evidenceDetails.pastDue, true);
    const accept = await merchant.call('POST', `/disputes/${dispute!.id}/accept`, {});
    assert.equal(accept.status, 409);
  });

  test('a refund racing the chargeback never gives back more than was received', async () => {
    const merchant = await ctx.merchant();
    const payment = await pay(merchant, '4000000000000275');
    ctx.clock.advance(followUpDelayMs);
    const [refund] = await Promise.all([
      merchant.call('POST', '/refunds/create', { paymentId: payment.id, amount: '6000' }),
      ctx.runJobs(),
    ]);
    const shown = await get(merchant, `/payment/${payment.id}`);
    const [dispute] = await disputesOf(merchant, payment.id);
    // Whichever locked the payment first, the other gets only what is left.
    const refunded = refund.status === 200 ? BigInt(refund.body.data.amount) : 0n;
    assert.ok(refund.status === 200 || refund.body.code === 'amount_too_large', refund.raw);
    assert.ok(BigInt(dispute!.amount) + refunded <= 10000n, `${dispute!.amount} + ${refunded}`);
    assert.ok(BigInt(shown.amountDisputed) + refunded <= BigInt(shown.amountReceived));
  });
});
