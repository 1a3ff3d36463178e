import { canonicalJson } from '../../events/canonical-json.js';
import { endpointEventType } from '../event-types.js';
import type { DeliveryKind } from './schemas.js';

/*
 * A delivery's body (docs/webhooks.md#acknowledgement-and-retries, docs/webhooks.md#what-is-sent): the exact bytes every attempt sends. Both kinds are made
 * from the event's stored body, which never changes: the legacy kind sends it as stored, the
 * endpoint kind with its `type` in the `endpoint_` form. A delivery planned since migration 0180
 * keeps no body of its own (NULL) and is sent with the one made from its event here; a delivery
 * stored before keeps the bytes it was stored with.
 */

/**
 * The endpoint kind's body: the stored event with `type` in its `endpoint_` form; the same id,
 * created and data, in the same canonical form.
 */
export function endpointBodyOf(eventBody: string, eventType?: string): string {
  const replaced = eventType === undefined ? undefined : withEndpointType(eventBody, eventType);
  if (replaced !== undefined) return replaced;
  const event = JSON.parse(eventBody) as { type: string } & Record<string, unknown>;
  return canonicalJson({ ...event, type: endpointEventType(event.type) });
}

/** A delivery's body made from its event's stored body and code. */
export function deliveryBodyOf(kind: DeliveryKind, eventBody: string, eventType: string): string {
  return kind === 'endpoint' ? endpointBodyOf(eventBody, eventType) : eventBody;
}

/**
 * The stored body begins {"id":"evt_…","apiVersion":"v1","type":"<code>",: replacing that one
 * member gives the same bytes as re-encoding the whole event, without parsing it. Undefined when
 * the text does not begin so (a body stored by an older version).
 */
export function withEndpointType(text: string, eventType: string): string | undefined {
  const member = `,"type":${JSON.stringify(eventType)},`;
  const at = text.indexOf(member);
  if (at <= 0 || at >= 64) return undefined;
  const replaced = `,"type":${JSON.stringify(endpointEventType(eventType))},`;
  return text.slice(0, at) + replaced + text.slice(at + member.length);
}
