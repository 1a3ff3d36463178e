/**
 * Adyen's standard notifications as Adyen sends them, signed for the tests with the account's HMAC
 * key (docs/processors-adyen.md, Notifications). Written from Adyen's description of the signature,
 * apart from the connector's own code, so that each checks the other.
 */

import { createHmac, randomBytes } from 'node:crypto';

export interface NotificationItemFields {
  eventCode: string;
  success?: 'true' | 'false';
  pspReference: string;
  originalReference?: string;
  merchantReference: string;
  amount?: { value: number; currency: string };
  reason?: string;
  additionalData?: Record<string, string>;
}

/** A NotificationRequestItem with its hmacSignature: correct, or made with a random key. */
export function signedNotificationItem(
  fields: NotificationItemFields,
  {
    merchantAccount,
    hmacKey,
    badSignature = false,
  }: { merchantAccount: string; hmacKey: string; badSignature?: boolean },
): Record<string, unknown> {
  const item = {
    eventCode: fields.eventCode,
    success: fields.success ?? 'true',
    pspReference: fields.pspReference,
    ...(fields.originalReference === undefined ? {} : { originalReference: fields.originalReference }),
    merchantAccountCode: merchantAccount,
    merchantReference: fields.merchantReference,
    amount: fields.amount ?? { value: 1000, currency: 'EUR' },
    eventDate: new Date().toISOString(),
    ...(fields.reason === undefined ? {} : { reason: fields.reason }),
  };
  const signed = [
    item.pspReference,
    fields.originalReference ?? '',
    item.merchantAccountCode,
    item.merchantReference,
    String(item.amount.value),
    item.amount.currency,
    item.eventCode,
    item.success,
  ].join(':');
  const key = badSignature ? randomBytes(32) : Buffer.from(hmacKey, 'hex');
  const hmacSignature = createHmac('sha256', key).update(signed, 'utf8').digest('base64');
  return { ...item, additionalData: { ...fields.additionalData, hmacSignature } };
}

/** A standard notification body holding `items`. */
export function notificationBody(items: Record<string, unknown>[]): string {
  return JSON.stringify({
    live: 'false',
    notificationItems: items.map((item) => ({ NotificationRequestItem: item })),
  });
}

/** POSTs a notification body to `url` as Adyen does; answers the HTTP status and body. */
export async function postNotification(url: string, body: string): Promise<{ status: number; body: string }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return { status: response.status, body: await response.text() };
}
