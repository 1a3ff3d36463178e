/**
 * Adyen's standard notifications through the connector's parseNotification: every item's HMAC
 * verified, each event code mapped, answered `[accepted]` (docs/processors-adyen.md, Notifications).
 * The items are signed by the stand-in for Adyen.
 */

import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { adyenCredentialsProblem, createAdyenProcessor } from '../src/processor/adyen/adyen-processor.js';
import { NotificationRefused, type LiveProcessor, type ProcessorNotification } from '../src/processor/processor.js';
import { startAdyenStandIn, type AdyenStandIn, type NotificationItemFields } from './helpers/adyen-stand-in.js';

// Hooks inside a describe: the file can share a test process with others (scripts/test-groups.mjs).
describe('Adyen standard notifications', () => {
  let standIn: AdyenStandIn;
  let adyen: LiveProcessor;

  before(async () => {
    standIn = await startAdyenStandIn();
    adyen = createAdyenProcessor({
      apiKey: standIn.apiKey,
      merchantAccount: standIn.merchantAccount,
      hmacKey: standIn.hmacKey,
      baseUrl: standIn.url,
      timeoutMs: 5000,
    });
  });

  after(async () => {
    await standIn?.close();
  });

  function parse(items: Record<string, unknown>[], processor = adyen) {
    return processor.parseNotification({
      headers: { 'content-type': 'application/json' },
      rawBody: standIn.notificationBody(items),
    });
  }

  function one(fields: NotificationItemFields): ProcessorNotification {
    const batch = parse([standIn.notificationItem(fields)]);
    assert.deepEqual(batch.answer, { contentType: 'text/plain', body: '[accepted]' });
    assert.equal(batch.notifications.length, 1);
    return batch.notifications[0]!;
  }

  describe('verified notifications are decoded', () => {
    test("Adyen's own documented example verifies (a check independent of the stand-in's signing)", () => {
      // Adyen's documentation signs this item with this (public, example) key; docs/processors-adyen.md.
      const documented = createAdyenProcessor({
        apiKey: 'unused',
        merchantAccount: 'TestMerchant',
        hmacKey: '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056',
        timeoutMs: 5000,
      });
      const item = {
        eventCode: 'AUTHORISATION',
        success: 'true',
        pspReference: '7914073381342284',
        merchantAccountCode: 'TestMerchant',
        merchantReference: 'TestPayment-1407325143704',
        amount: { value: 1130, currency: 'EUR' },
        additionalData: { hmacSignature: 'coqCmt/IZ4E3CzPvMY8zTjQVL5hYJUiBRg8UU+iCWo0=' },
      };
      const batch = documented.parseNotification({
        headers: {},
        rawBody: JSON.stringify({ live: 'false', notificationItems: [{ NotificationRequestItem: item }] }),
      });
      assert.equal(batch.notifications[0]?.kind, 'authorisation');
    });

    test('a successful AUTHORISATION approves with the network reference Adyen sent', () => {
      const notification = one({
        eventCode: 'AUTHORISATION',
        pspReference: 'QFQTPCQ8HXSKGK82',
        merchantReference: 'pay_auth1',
        additionalData: { networkTxReference: '559812345678904' },
      });
      assert.equal(notification.kind, 'authorisation');
      if (notification.kind !== 'authorisation') return;
      assert.equal(notification.id, 'AUTHORISATION:QFQTPCQ8HXSKGK82:true');
      assert.equal(notification.paymentId, 'pay_auth1');
      assert.equal(notification.outcome.kind, 'approved');
      if (notification.outcome.kind !== 'approved') return;
      assert.equal(notification.outcome.processorReference, 'QFQTPCQ8HXSKGK82');
      assert.equal(notification.outcome.networkTransactionId, '559812345678904');
    });

    test('an AUTHORISATION without a network reference falls back to the pspReference', () => {
      const notification = one({
        eventCode: 'AUTHORISATION',
        pspReference: 'QFQTPCQ8HXSKGK83',
        merchantReference: 'pay_a',
      });
      assert.ok(notification.kind === 'authorisation' && notification.outcome.kind === 'approved');
      assert.equal(notification.outcome.networkTransactionId, 'QFQTPCQ8HXSKGK83');
    });

    test('a failed AUTHORISATION declines with the reason mapped and kept', () => {
      const notification = one({
        eventCode: 'AUTHORISATION',
        success: 'false',
        pspReference: 'QFQTPCQ8HXSKGK84',
        merchantReference: 'pay_auth2',
        reason: 'Not enough balance',
      });
      assert.ok(notification.kind === 'authorisation' && notification.outcome.kind === 'declined');
      assert.equal(notification.id, 'AUTHORISATION:QFQTPCQ8HXSKGK84:false');
      assert.equal(notification.outcome.code, 'insufficient_funds');
      assert.equal(notification.outcome.processorReason, 'Not enough balance');
    });

    test('CAPTURE names the payment by merchantReference and originalReference', () => {
      for (const success of ['true', 'false'] as const) {
        const notification = one({
          eventCode: 'CAPTURE',
          success,
          pspReference: 'MODCAPTURE000001',
          originalReference: 'QFQTPCQ8HXSKGK85',
          merchantReference: 'pay_cap',
          reason: success === 'false' ? 'Insufficient balance on payment' : undefined,
        });
        assert.deepEqual(notification, {
          kind: 'capture',
          id: `CAPTURE:MODCAPTURE000001:${success}`,
          paymentId: 'pay_cap',
          processorReference: 'QFQTPCQ8HXSKGK85',
          success: success === 'true',
          reason: success === 'false' ? 'Insufficient balance on payment' : null,
        });
      }
    });

    test('CANCELLATION', () => {
      assert.deepEqual(
        one({
          eventCode: 'CANCELLATION',
          pspReference: 'MODCANCEL0000001',
          originalReference: 'QFQTPCQ8HXSKGK86',
          merchantReference: 'pay_can',
        }),
        {
          kind: 'cancellation',
          id: 'CANCELLATION:MODCANCEL0000001:true',
          paymentId: 'pay_can',
          processorReference: 'QFQTPCQ8HXSKGK86',
          success: true,
        },
      );
    });

    test('REFUND names the refund by merchantReference; a failed one or REFUND_FAILED fails it', () => {
      assert.deepEqual(
        one({
          eventCode: 'REFUND',
          pspReference: 'MODREFUND0000001',
          originalReference: 'P1',
          merchantReference: 're_1',
        }),
        {
          kind: 'refund',
          id: 'REFUND:MODREFUND0000001:true',
          refundId: 're_1',
          processorReference: 'MODREFUND0000001',
          success: true,
          reason: null,
        },
      );
      const refused = one({
        eventCode: 'REFUND',
        success: 'false',
        pspReference: 'MODREFUND0000002',
        originalReference: 'P1',
        merchantReference: 're_2',
      });
      assert.ok(refused.kind === 'refund');
      assert.equal(refused.success, false);
      assert.equal(refused.reason, 'declined');
      const failedLater = one({
        eventCode: 'REFUND_FAILED',
        pspReference: 'MODREFUND0000003',
        originalReference: 'P1',
        merchantReference: 're_3',
      });
      assert.ok(failedLater.kind === 'refund');
      assert.equal(failedLater.refundId, 're_3');
      assert.equal(failedLater.success, false);
      assert.equal(failedLater.reason, 'declined');
    });

    test('CHARGEBACK, NOTIFICATION_OF_CHARGEBACK and CHARGEBACK_REVERSED are dispute steps', () => {
      for (const eventCode of ['NOTIFICATION_OF_CHARGEBACK', 'CHARGEBACK', 'CHARGEBACK_REVERSED']) {
        assert.deepEqual(
          one({
            eventCode,
            pspReference: 'DISPUTE000000001',
            originalReference: 'QFQTPCQ8HXSKGK87',
            merchantReference: 'pay_dis',
            amount: { value: 4200, currency: 'USD' },
            reason: 'Fraud',
          }),
          {
            kind: 'dispute',
            id: `${eventCode}:DISPUTE000000001:true`,
            paymentId: 'pay_dis',
            processorReference: 'QFQTPCQ8HXSKGK87',
            step: eventCode,
            disputeReference: 'QFQTPCQ8HXSKGK87',
            // The Disputes API names the dispute by the chargeback's own pspReference.
            responseReference: 'DISPUTE000000001',
            processorStatus: null,
            amount: 4200n,
            currency: 'USD',
            reasonCode: 'Fraud',
          },
        );
      }
    });

    test('any other event is acknowledged and ignored', () => {
      assert.deepEqual(
        one({ eventCode: 'REPORT_AVAILABLE', pspReference: 'REPORT0000000001', merchantReference: '' }),
        {
          kind: 'ignored',
          id: 'REPORT_AVAILABLE:REPORT0000000001:true',
          type: 'REPORT_AVAILABLE',
        },
      );
    });

    test('a batch of several items gives one notification each', () => {
      const batch = parse([
        standIn.notificationItem({
          eventCode: 'AUTHORISATION',
          pspReference: 'A000000000000001',
          merchantReference: 'p1',
        }),
        standIn.notificationItem({ eventCode: 'CAPTURE', pspReference: 'C000000000000001', merchantReference: 'p1' }),
      ]);
      assert.deepEqual(
        batch.notifications.map((n) => n.kind),
        ['authorisation', 'capture'],
      );
    });

    test("another merchant account's items are acknowledged and left alone", () => {
      const other = createAdyenProcessor({
        apiKey: standIn.apiKey,
        merchantAccount: 'AnotherMerchant',
        hmacKey: standIn.hmacKey,
        timeoutMs: 5000,
      });
      const batch = parse(
        [
          standIn.notificationItem({
            eventCode: 'AUTHORISATION',
            pspReference: 'A000000000000002',
            merchantReference: 'p',
          }),
        ],
        other,
      );
      assert.equal(batch.notifications[0]?.kind, 'ignored');
    });
  });

  describe("the stand-in's notify, as Adyen posts it", () => {
    test('a signed item is accepted, a wrongly signed one refused, by a receiver that asks the connector', async () => {
      const applied: ProcessorNotification[] = [];
      const receiver = createServer((request, response) => {
        let rawBody = '';
        request.on('data', (chunk: Buffer) => (rawBody += chunk.toString('utf8')));
        request.on('end', () => {
          try {
            const batch = adyen.parseNotification({
              headers: { 'content-type': request.headers['content-type'] },
              rawBody,
            });
            applied.push(...batch.notifications);
            response.writeHead(200, { 'content-type': batch.answer.contentType }).end(batch.answer.body);
          } catch (err) {
            response.writeHead(err instanceof NotificationRefused ? 401 : 500).end();
          }
        });
      });
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/processor_webhooks/pa_test`;
      try {
        const fields = { eventCode: 'CAPTURE', pspReference: 'NOTIFY0000000001', merchantReference: 'pay_n' };
        assert.deepEqual(await standIn.notify(url, fields), { status: 200, body: '[accepted]' });
        assert.equal((await standIn.notify(url, fields, { badSignature: true })).status, 401);
        assert.deepEqual(
          applied.map((n) => n.id),
          ['CAPTURE:NOTIFY0000000001:true'],
        );
      } finally {
        await new Promise<void>((resolve) => receiver.close(() => resolve()));
      }
    });
  });

  describe('credentials', () => {
    test('an HMAC key that is not hexadecimal is refused before any notification could verify with it', () => {
      for (const hmacKey of ['', 'not-hex-at-all', 'ZZ'.repeat(32), 'abc', 'ab'.repeat(8)]) {
        assert.throws(
          () => createAdyenProcessor({ apiKey: 'k', merchantAccount: 'M', hmacKey, timeoutMs: 5000 }),
          (err: Error) => {
            assert.match(err.message, /hmacKey must be hexadecimal digits/);
            assert.equal(hmacKey !== '' && err.message.includes(hmacKey), false);
            return true;
          },
        );
      }
      assert.deepEqual(adyenCredentialsProblem({ apiKey: ' ', merchantAccount: 'M', hmacKey: standIn.hmacKey }), {
        field: 'apiKey',
        message: 'must not be empty',
      });
      assert.equal(
        adyenCredentialsProblem({ apiKey: 'k', merchantAccount: 'M', hmacKey: standIn.hmacKey.toLowerCase() }),
        null,
      );
    });
  });

  describe('unverified notifications are refused', () => {
    const fields = { eventCode: 'AUTHORISATION', pspReference: 'QFQTPCQ8HXSKGK88', merchantReference: 'pay_x' };

    function refused(rawBody: string) {
      assert.throws(
        () => adyen.parseNotification({ headers: {}, rawBody }),
        (err: Error) => {
          assert.ok(err instanceof NotificationRefused, String(err));
          assert.equal(err.message.toLowerCase().includes(standIn.hmacKey.toLowerCase()), false);
          return true;
        },
      );
    }

    test('a signature made with another key', () => {
      refused(standIn.notificationBody([standIn.notificationItem(fields, { badSignature: true })]));
    });

    test('a signed item changed afterwards (amount, success, reference)', () => {
      const signed = standIn.notificationItem(fields);
      refused(standIn.notificationBody([{ ...signed, amount: { value: 1, currency: 'EUR' } }]));
      refused(standIn.notificationBody([{ ...signed, success: 'false' }]));
      refused(standIn.notificationBody([{ ...signed, merchantReference: 'pay_other' }]));
    });

    test('one bad item refuses the whole batch', () => {
      refused(
        standIn.notificationBody([
          standIn.notificationItem(fields),
          standIn.notificationItem({ ...fields, pspReference: 'QFQTPCQ8HXSKGK89' }, { badSignature: true }),
        ]),
      );
    });

    test('an item without a signature, a body that is not JSON, a batch without items', () => {
      const { additionalData: _signature, ...unsigned } = standIn.notificationItem(fields);
      refused(standIn.notificationBody([unsigned]));
      refused('[accepted');
      refused(JSON.stringify({ live: 'false', notificationItems: [] }));
    });
  });
});
