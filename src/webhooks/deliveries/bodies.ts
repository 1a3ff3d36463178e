import { endpointBodyOf } from '../../events/endpoint-body.js';
import type { DeliveryKind } from './schemas.js';

/*
 * A delivery's body (docs/webhooks.md#acknowledgement-and-retries, docs/webhooks.md#what-is-sent): the exact bytes every attempt sends. Both kinds are made
 * from the event's stored body, which never changes: the legacy kind sends it as stored, the
 * endpoint kind with its `type` in the `endpoint_` form. A delivery planned since migration 0180
 * keeps no body of its own (NULL) and is sent with the one made from its event here; a delivery
 * stored before keeps the bytes it was stored with.
 */

/** A delivery's body made from its event's stored body and code. */
export function deliveryBodyOf(kind: DeliveryKind, eventBody: string, eventType: string): string {
  return kind === 'endpoint' ? endpointBodyOf(eventBody, eventType) : eventBody;
}
