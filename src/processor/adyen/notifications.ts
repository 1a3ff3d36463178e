/**
 * Adyen's standard notifications (docs/processors-adyen.md, Notifications): a batch of items, each
 * signed with the account's HMAC key, answered `[accepted]` once every item verified.
 */

import { createHmac, timingSafeEqual } from 'node:crypto';
import { NotificationRefused, type NotificationBatch, type ProcessorNotification } from '../processor.js';
import { declineCodeOf, declineMessages } from './outcomes.js';

const accepted = { contentType: 'text/plain', body: '[accepted]' } as const;

/** The fields of a NotificationRequestItem the connector reads. */
export interface AdyenNotificationItem {
  eventCode: string;
  success: string;
  pspReference: string;
  originalReference?: string;
  merchantAccountCode: string;
  merchantReference: string;
  amount: { value: number; currency: string };
  reason?: string;
  additionalData?: Record<string, string>;
}

/**
 * The signed string: pspReference, originalReference, merchantAccountCode, merchantReference,
 * amount value, amount currency, eventCode and success, joined by colons, a missing field as an
 * empty string, nothing escaped.
 */
export function signedPayloadOf(item: AdyenNotificationItem): string {
  return [
    item.pspReference,
    item.originalReference ?? '',
    item.merchantAccountCode,
    item.merchantReference,
    String(item.amount.value),
    item.amount.currency,
    item.eventCode,
    item.success,
  ].join(':');
}

/** Base64 of HMAC-SHA256 over the signed string, keyed with the hex HMAC key decoded to bytes. */
export function signatureOf(item: AdyenNotificationItem, hmacKey: string): string {
  return createHmac('sha256', Buffer.from(hmacKey, 'hex')).update(signedPayloadOf(item), 'utf8').digest('base64');
}

function verified(item: AdyenNotificationItem, hmacKey: string): boolean {
  const given = item.additionalData?.hmacSignature;
  if (typeof given !== 'string') return false;
  const expected = Buffer.from(signatureOf(item, hmacKey), 'base64');
  const received = Buffer.from(given, 'base64');
  return received.length === expected.length && timingSafeEqual(received, expected);
}

function isItem(value: unknown): value is AdyenNotificationItem {
  if (typeof value !== 'object' || value === null) return false;
  const item = value as Record<string, unknown>;
  const amount = item.amount as Record<string, unknown> | undefined;
  return (
    typeof item.eventCode === 'string' &&
    (item.success === 'true' || item.success === 'false') &&
    typeof item.pspReference === 'string' &&
    typeof item.merchantAccountCode === 'string' &&
    typeof item.merchantReference === 'string' &&
    (item.originalReference === undefined || typeof item.originalReference === 'string') &&
    typeof amount?.value === 'number' &&
    Number.isSafeInteger(amount.value) &&
    typeof amount.currency === 'string'
  );
}

/** The items of a batch; a body that is not one is refused like a bad signature (nothing applied). */
function itemsOf(rawBody: string): AdyenNotificationItem[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(rawBody);
  } catch {
    throw new NotificationRefused('The Adyen notification is not JSON');
  }
  const list = (parsed as { notificationItems?: unknown } | null)?.notificationItems;
  if (!Array.isArray(list) || list.length === 0) throw new NotificationRefused('The Adyen notification has no items');
  return list.map((entry: unknown) => {
    const item = (entry as { NotificationRequestItem?: unknown } | null)?.NotificationRequestItem;
    if (!isItem(item)) throw new NotificationRefused('An Adyen notification item lacks a required field');
    return item;
  });
}

/**
 * Verifies every item of the batch before decoding any: one item that does not verify refuses the
 * whole request, so that Adyen sends it again and nothing is applied from a forged batch.
 */
export function parseAdyenNotification(
  rawBody: string,
  account: { hmacKey: string; merchantAccount: string },
): NotificationBatch {
  const items = itemsOf(rawBody);
  for (const item of items) {
    if (!verified(item, account.hmacKey))
      throw new NotificationRefused('An Adyen notification item has a bad signature');
  }
  const notifications = items.map((item) =>
    // A company-level webhook may carry another merchant account's items: they belong to another
    // processor account, so they are acknowledged and left alone here.
    item.merchantAccountCode === account.merchantAccount
      ? notificationOf(item)
      : ({ kind: 'ignored', id: idOf(item), type: `${item.eventCode} for another merchant account` } as const),
  );
  return { notifications, answer: { ...accepted } };
}

/** Adyen sends a notification again until answered; the same event on the same reference is the same notification. */
function idOf(item: AdyenNotificationItem): string {
  return `${item.eventCode}:${item.pspReference}:${item.success}`;
}

function notificationOf(item: AdyenNotificationItem): ProcessorNotification {
  const success = item.success === 'true';
  const id = idOf(item);
  // A modification's own pspReference is new; originalReference names the payment it changes.
  const paymentReference = item.originalReference ?? item.pspReference;
  const reason = item.reason !== undefined && item.reason !== '' ? item.reason : null;
  switch (item.eventCode) {
    case 'AUTHORISATION':
      return {
        kind: 'authorisation',
        id,
        paymentId: item.merchantReference,
        outcome: authorisationOutcomeOf(item, success, reason),
      };
    case 'CAPTURE':
      return {
        kind: 'capture',
        id,
        paymentId: item.merchantReference,
        processorReference: paymentReference,
        success,
        reason,
      };
    case 'CANCELLATION':
      return {
        kind: 'cancellation',
        id,
        paymentId: item.merchantReference,
        processorReference: paymentReference,
        success,
      };
    case 'REFUND':
      return {
        kind: 'refund',
        id,
        refundId: item.merchantReference,
        processorReference: item.pspReference,
        success,
        reason: success ? null : 'declined',
      };
    case 'REFUND_FAILED':
      // Adyen took the refund, then the card scheme did not: the money did not go back.
      return {
        kind: 'refund',
        id,
        refundId: item.merchantReference,
        processorReference: item.pspReference,
        success: false,
        reason: 'declined',
      };
    case 'CHARGEBACK':
    case 'NOTIFICATION_OF_CHARGEBACK':
    case 'CHARGEBACK_REVERSED':
      return {
        kind: 'dispute',
        id,
        paymentId: item.merchantReference,
        processorReference: paymentReference,
        step: item.eventCode,
        // docs/decisions/0044-disputes.md: Adyen names a chargeback by its payment.
        disputeReference: paymentReference,
        // The Disputes API names the dispute by the chargeback's own pspReference.
        responseReference: item.pspReference,
        processorStatus: null,
        amount: BigInt(item.amount.value),
        currency: item.amount.currency,
        reasonCode: reason,
      };
    default:
      return { kind: 'ignored', id, type: item.eventCode };
  }
}

function authorisationOutcomeOf(
  item: AdyenNotificationItem,
  success: boolean,
  reason: string | null,
): Extract<ProcessorNotification, { kind: 'authorisation' }>['outcome'] {
  // A notification carries no account score: risk is unknown here and the caller keeps its own.
  const risk = { riskScore: 0, riskMessage: 'adyen_account_score' };
  if (success) {
    return {
      kind: 'approved',
      processorReference: item.pspReference,
      networkTransactionId: item.additionalData?.networkTxReference || item.pspReference,
      networkToken: null,
      risk,
      // The payment's own pre-authorization flag decides; Adyen's AUTHORISATION does not say.
      captured: false,
      followUp: null,
    };
  }
  const code = declineCodeOf(reason, null, null);
  return {
    kind: 'declined',
    processorReference: item.pspReference,
    code,
    message: declineMessages[code],
    risk,
    processorReason: reason,
  };
}
