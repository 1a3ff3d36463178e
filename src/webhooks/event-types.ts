import { eventTypes, type EventType } from '../events/schemas.js';

/**
 * SPEC §6.4 / DESIGN §5: the `type` of the endpoint notification, `endpoint_<group>.<group>_<action>`
 * for the event code `<group>.<action>` (payment.succeeded → endpoint_payment.payment_succeeded,
 * refund.pending → endpoint_refund.refund_pending).
 *
 * The group keeps the case the code is written in: DESIGN §5 sends event codes exactly as SPEC
 * §6.2 writes them, so Invoice.sent becomes endpoint_Invoice.Invoice_sent (not
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

/** Every SPEC §6.2 code with its endpoint form, for documentation and tests. */
export const endpointEventTypes: ReadonlyArray<readonly [EventType, string]> = eventTypes.map(
  (code) => [code, endpointEventType(code)] as const,
);
