import { editDistance } from '../edit-distance.js';
import { eventTypes, type EventType } from './schemas.js';

/**
 * docs/webhooks.md#what-is-sent: the `type` of the endpoint notification, `endpoint_<group>.<group>_<action>`
 * for the event code `<group>.<action>` (payment.succeeded → endpoint_payment.payment_succeeded,
 * refund.pending → endpoint_refund.refund_pending).
 *
 * The group keeps the case the code is written in: docs/webhooks.md#what-is-sent sends event codes exactly as docs/webhooks.md#event-codes writes them, so Invoice.sent becomes endpoint_Invoice.Invoice_sent (not
 * endpoint_invoice.invoice_sent). The mapping is then mechanical and one-to-one, and a merchant
 * can always go back from the endpoint form to the code it subscribed to.
 */
export function endpointEventType(code: string): string {
  const dot = code.indexOf('.');
  if (dot <= 0 || dot === code.length - 1) throw new Error(`Not an event code of the form <group>.<action>: ${code}`);
  const group = code.slice(0, dot);
  const action = code.slice(dot + 1);
  return `endpoint_${group}.${group}_${action}`;
}

/** Every docs/webhooks.md#event-codes code with its endpoint form, for documentation and tests. */
export const endpointEventTypes: ReadonlyArray<readonly [EventType, string]> = eventTypes.map(
  (code) => [code, endpointEventType(code)] as const,
);

/** Each name an event code may be given by, lower-cased, to the code as docs/webhooks.md#event-codes writes it. */
const codesByName = new Map<string, EventType>(
  endpointEventTypes.flatMap(([code, endpointForm]) => [
    [code.toLowerCase(), code],
    [endpointForm.toLowerCase(), code],
  ]),
);

/**
 * docs/webhooks.md#endpoints-and-tokens: an event code given by either of its names (`payment.succeeded` or
 * `endpoint_payment.payment_succeeded`), in any letter case, as docs/webhooks.md#event-codes writes it; undefined
 * when it names no event.
 */
export function resolveEventCode(name: string): EventType | undefined {
  return codesByName.get(name.trim().toLowerCase());
}

/**
 * The code closest to a name that is none (a typo, a plural, a wrong group), for a "did you mean"
 * hint; undefined when nothing is close enough to be a likely intent.
 */
export function closestEventCode(name: string): EventType | undefined {
  const wanted = name.trim().toLowerCase();
  let best: { code: EventType; distance: number } | undefined;
  for (const [known, code] of codesByName) {
    const distance = editDistance(wanted, known);
    if (!best || distance < best.distance) best = { code, distance };
  }
  // Within a third of the name's length: `payment.faild` → payment.failed, not `refund.pending` for `x`.
  return best && best.distance <= Math.max(2, Math.floor(wanted.length / 3)) ? best.code : undefined;
}

/** "did you mean `Invoice.sent`?" when a code is close, else the list of codes; for error messages. */
export function unknownEventCodeHint(name: string): string {
  const closest = closestEventCode(name);
  return closest !== undefined
    ? `did you mean \`${closest}\`?`
    : `event codes are ${eventTypes.join(', ')} (or their endpoint_ forms)`;
}

/**
 * The command line takes a code as written, by either name (`Invoice.sent` or
 * `endpoint_Invoice.Invoice_sent`), so that what it prints and makes is exactly what was asked;
 * any other spelling is answered with a "did you mean" (unknownEventCodeHint).
 */
export function exactEventCode(name: string): EventType | undefined {
  const code = resolveEventCode(name);
  return code !== undefined && (name === code || name === endpointEventType(code)) ? code : undefined;
}
