import { canonicalJson } from './canonical-json.js';
import { endpointEventType } from './event-types.js';

/*
 * An event's body in its endpoint form (docs/webhooks.md): what a webhook endpoint and the event
 * stream receive. The stored body is the legacy form; the endpoint form differs only in `type`.
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
