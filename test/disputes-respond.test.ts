/**
 * Live disputes answered at the processor (docs/disputes.md, Live; decision 0044): evidence with
 * its files submitted, and acceptance, reach the Stripe and Adyen stand-ins once each, with their
 * idempotency keys, even when the merchant sends the request again after the processor failed.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { apiBase, databaseKind, injectRaw, type TestMerchant } from './helpers/harness.js';
import { stripeTestCards } from './helpers/stripe-stand-in.js';
import { adyenTestCards } from './helpers/adyen-stand-in.js';
import { liveDisputeSetup } from './helpers/live-disputes.js';

const pdf = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');
const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(32)]);

describe(`live disputes answered at the processor (${databaseKind})`, () => {
  const live = liveDisputeSetup();
  const { merchantWith, pay, notify } = live;

  async function upload(merchant: TestMerchant, bytes: Buffer, filename: string): Promise<string> {
    const boundary = '----tessera-test-boundary';
    const answer = await injectRaw(live.context, {
      method: 'POST',
      url: `${apiBase}/files`,
      headers: {
        authorization: `Bearer ${merchant.privateKey}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
      },
      payload: Buffer.concat([
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\ndispute_evidence\r\n`),
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
        ),
        bytes,
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]),
    });
    assert.equal(answer.statusCode, 200, answer.body);
    return JSON.parse(answer.body).data.id as string;
  }

  /** A Stripe dispute opened by charge.dispute.created on a new payment; answers the merchant and dispute id. */
  async function stripeDispute(reference: string) {
    const { merchant, webhookPath } = await merchantWith('stripe');
    const payment = await pay(merchant, stripeTestCards.succeeds, 'USD');
    const intent = [...live.stripe.api.intents.values()].find(
      (candidate) => (candidate.metadata as Record<string, string>).tessera_payment_id === payment.id,
    )!;
    const event = live.stripe.event('charge.dispute.created', {
      id: reference,
      object: 'dispute',
      amount: 2500,
      currency: 'usd',
      payment_intent: intent.id,
      charge: 'ch_respond',
      reason: 'product_not_received',
      status: 'needs_response',
      metadata: {},
    });
    await notify(webhookPath, event.headers, event.rawBody);
    const listed = await merchant.call('GET', `/disputes?paymentId=${payment.id}`);
    return { merchant, disputeId: listed.body.data.data[0].id as string };
  }

  /** An Adyen chargeback opened by NOTIFICATION_OF_CHARGEBACK (the chargeback's own pspReference given). */
  async function adyenDispute(chargebackReference: string) {
    const { merchant, webhookPath } = await merchantWith('adyen');
    const payment = await pay(merchant, adyenTestCards.approved, 'EUR');
    const body = live.adyen.notificationBody([
      live.adyen.notificationItem({
        eventCode: 'NOTIFICATION_OF_CHARGEBACK',
        pspReference: chargebackReference,
        originalReference: `PSP${chargebackReference}`,
        merchantReference: payment.id,
        amount: { value: 2500, currency: 'EUR' },
        reason: '13.1',
      }),
    ]);
    await notify(webhookPath, { 'content-type': 'application/json' }, body);
    const listed = await merchant.call('GET', `/disputes?paymentId=${payment.id}`);
    return { merchant, disputeId: listed.body.data.data[0].id as string };
  }

  test("an Adyen account has its Disputes API's address, by default Adyen's; a Stripe account has none", async () => {
    const merchant = await live.context.merchant();
    const create = (payload: object) =>
      injectRaw(live.context, {
        method: 'POST',
        url: `/admin/v1/merchants/${merchant.id}/processor_accounts/create`,
        headers: { authorization: `Bearer ${live.context.operatorKey}`, 'content-type': 'application/json' },
        payload: JSON.stringify(payload),
      });
    const stripeCredentials = { secretKey: live.stripe.secretKey, webhookSecret: live.stripe.webhookSecret };
    const refused = await create({
      processor: 'stripe',
      mode: 'test',
      credentials: stripeCredentials,
      disputesBaseUrl: live.stripe.url,
    });
    assert.equal(refused.statusCode, 400, refused.body);
    assert.equal(JSON.parse(refused.body).data.param, 'disputesBaseUrl');
    const adyenAccount = await create({
      processor: 'adyen',
      mode: 'test',
      credentials: {
        apiKey: live.adyen.apiKey,
        merchantAccount: live.adyen.merchantAccount,
        hmacKey: live.adyen.hmacKey,
      },
    });
    assert.equal(adyenAccount.statusCode, 200, adyenAccount.body);
    assert.equal(
      JSON.parse(adyenAccount.body).data.disputesBaseUrl,
      'https://ca-test.adyen.com/ca/services/DisputeService/v30',
    );
  });

  test('Stripe: the file and the evidence with submit=true reach Stripe once, though the first request failed', async () => {
    const { merchant, disputeId } = await stripeDispute('du_respond_1');
    const receipt = await upload(merchant, pdf, 'receipt.pdf');
    // Staging stays in Tessera: nothing is sent.
    const staged = await merchant.call('POST', `/disputes/${disputeId}/update`, {
      evidence: { productDescription: 'A blue teapot' },
    });
    assert.equal(staged.status, 200, staged.raw);
    assert.equal(live.stripe.disputes.disputes.get('du_respond_1'), undefined);

    // Stripe takes the evidence, but its answer is lost (the client's own second try too): the
    // merchant is told, nothing changes.
    live.stripe.faultOn('/v1/disputes/du_respond_1', 'reset', 2);
    const submit = { evidence: { uncategorizedText: 'Delivered on time', receipt }, submit: true };
    const failed = await merchant.call('POST', `/disputes/${disputeId}/update`, submit);
    assert.equal(failed.status, 503, failed.raw);
    assert.equal(failed.body.code, 'processor_error');
    assert.match(failed.body.msg, /stripe did not take the dispute's evidence \(Stripe dispute update failed/);
    const unchanged = await merchant.call('GET', `/disputes/${disputeId}`);
    assert.equal(unchanged.body.data.status, 'needs_response');
    assert.equal(unchanged.body.data.evidenceDetails.submissionCount, 0);
    // Another evidence meanwhile would not be the evidence being sent: refused.
    const other = await merchant.call('POST', `/disputes/${disputeId}/update`, {
      evidence: { uncategorizedText: 'Something else' },
    });
    assert.equal(other.status, 409, other.raw);
    assert.equal(other.body.code, 'dispute_not_open');

    const sent = await merchant.call('POST', `/disputes/${disputeId}/update`, submit);
    assert.equal(sent.status, 200, sent.raw);
    assert.equal(sent.body.data.status, 'under_review');
    assert.equal(sent.body.data.evidenceDetails.submissionCount, 1);

    const record = live.stripe.disputes.disputes.get('du_respond_1')!;
    assert.equal(record.updates.length, 1);
    const [update] = record.updates;
    assert.equal(update!.submit, true);
    assert.equal(update!.idempotencyKey, `${disputeId}.submit.1`);
    assert.equal(update!.evidence.product_description, 'A blue teapot');
    assert.equal(update!.evidence.uncategorized_text, 'Delivered on time');
    const file = live.stripe.disputes.files.get(update!.evidence.receipt!)!;
    assert.deepEqual(file.data, pdf);
    assert.equal(file.purpose, 'dispute_evidence');
    assert.equal(file.type, 'application/pdf');
    assert.equal(file.filename, 'receipt.pdf');
    assert.equal(live.stripe.disputes.files.size, 1);
    const uploads = live.stripe.requests.filter((request) => request.path === '/v1/files');
    assert.deepEqual(
      uploads.map((request) => request.idempotencyKey),
      [`${disputeId}.submit.1.receipt`, `${disputeId}.submit.1.receipt`],
    );
  });

  test('Stripe: accept closes the dispute at Stripe once, though the first request failed', async () => {
    const { merchant, disputeId } = await stripeDispute('du_respond_2');
    live.stripe.faultOn('/v1/disputes/du_respond_2/close', 'fail');
    const failed = await merchant.call('POST', `/disputes/${disputeId}/accept`);
    assert.equal(failed.status, 503, failed.raw);
    assert.equal(failed.body.code, 'processor_error');
    assert.equal((await merchant.call('GET', `/disputes/${disputeId}`)).body.data.status, 'needs_response');
    const accepted = await merchant.call('POST', `/disputes/${disputeId}/accept`);
    assert.equal(accepted.status, 200, accepted.raw);
    assert.equal(accepted.body.data.status, 'accepted');
    assert.deepEqual(live.stripe.disputes.disputes.get('du_respond_2')!.closes, [
      { idempotencyKey: `${disputeId}.accept.1` },
    ]);
  });

  test('Adyen: documents supplied and the dispute defended once, at its Disputes API, though the first request failed', async () => {
    const { merchant, disputeId } = await adyenDispute('CB0000000000RESP1');
    const receipt = await upload(merchant, pdf, 'receipt.pdf');
    const image = await upload(merchant, png, 'photo.png');
    // Adyen takes PDF and JPEG documents only: a PNG is refused before anything is sent.
    const refused = await merchant.call('POST', `/disputes/${disputeId}/update`, {
      evidence: { receipt, uncategorizedFile: image },
      submit: true,
    });
    assert.equal(refused.status, 400, refused.raw);
    assert.equal(refused.body.data.param, 'evidence.uncategorizedFile');
    assert.equal(live.adyen.count('supplyDefenseDocument'), 0);

    live.adyen.faultOn('defendDispute', 'reset');
    const submit = { evidence: { uncategorizedFile: '', productDescription: 'A blue teapot' }, submit: true };
    const failed = await merchant.call('POST', `/disputes/${disputeId}/update`, submit);
    assert.equal(failed.status, 503, failed.raw);
    assert.equal(failed.body.code, 'processor_error');
    assert.equal((await merchant.call('GET', `/disputes/${disputeId}`)).body.data.status, 'needs_response');
    const sent = await merchant.call('POST', `/disputes/${disputeId}/update`, submit);
    assert.equal(sent.status, 200, sent.raw);
    assert.equal(sent.body.data.status, 'under_review');
    assert.equal(sent.body.data.evidenceDetails.submissionCount, 1);

    const key = `${disputeId}.submit.1`;
    assert.equal(live.adyen.count('supplyDefenseDocument', `${key}.documents`), 1);
    assert.equal(live.adyen.count('defendDispute', key), 1);
    assert.equal(live.adyen.count('defendDispute'), 1);
    const desk = live.adyen.disputeDesk.disputes.get('CB0000000000RESP1')!;
    assert.equal(desk.defendedWith, 'SupplyDefenseMaterial');
    assert.deepEqual(desk.documents, [
      { content: pdf.toString('base64'), contentType: 'application/pdf', defenseDocumentTypeCode: 'DefenseMaterial' },
    ]);
    assert.equal(live.adyen.sent(key).merchantAccountCode, live.adyen.merchantAccount);
  });

  test('Adyen: accept reaches acceptDispute once, though the first request failed', async () => {
    const { merchant, disputeId } = await adyenDispute('CB0000000000RESP2');
    live.adyen.faultOn('acceptDispute', 'fail');
    const failed = await merchant.call('POST', `/disputes/${disputeId}/accept`);
    assert.equal(failed.status, 503, failed.raw);
    const accepted = await merchant.call('POST', `/disputes/${disputeId}/accept`);
    assert.equal(accepted.status, 200, accepted.raw);
    assert.equal(accepted.body.data.status, 'accepted');
    assert.equal(live.adyen.count('acceptDispute', `${disputeId}.accept.1`), 1);
    assert.equal(live.adyen.count('acceptDispute'), 1);
    assert.equal(live.adyen.disputeDesk.disputes.get('CB0000000000RESP2')!.accepted, true);
  });
});
