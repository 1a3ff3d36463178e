/**
 * A webhook endpoint as answered (docs/webhooks.md#endpoints-and-tokens; health from docs/webhooks.md#endpoint-health) and its subscribed events
 * as stored: the row-to-answer mapping and the input rule the service applies on create and update.
 */
import { invalidField } from '../../core/errors.js';
import { isoTimestamp } from '../../time.js';
import { resolveEventCode, unknownEventCodeHint } from '../../events/event-types.js';
import { endpointHealth } from '../health/states.js';
import type { WebhookEndpointRow } from './queries.js';
import { allEvents, type WebhookEndpoint } from './schemas.js';

export function toWebhookEndpoint(row: WebhookEndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    kind: row.kind,
    url: row.url,
    description: row.description,
    enabledEvents: row.enabled_events,
    legacyNotifications: row.legacy_notifications,
    signatureCase: row.signature_case,
    format: row.format,
    signatureAlgorithm: row.signature_algorithm,
    publicKey: row.public_key,
    status: row.status,
    health: endpointHealth(row.status, row.failing_since),
    // Kept while disabled: when it began failing is where a recover after re-enabling starts.
    failingSince: row.failing_since ? isoTimestamp(row.failing_since) : null,
    lastError: row.last_error ?? null,
    disabledReason: row.status === 'disabled' ? (row.disabled_reason ?? null) : null,
    nextAttemptAt: row.next_attempt_at && row.status === 'enabled' ? isoTimestamp(row.next_attempt_at) : null,
    created: isoTimestamp(row.created_at),
  };
}

/**
 * '*' stands for every type, so it absorbs the rest; either name of a code, in any letter case,
 * stands for the code as docs/webhooks.md#event-codes writes it (docs/webhooks.md); a code listed twice counts once.
 */
export function normalizeEnabledEvents(events: readonly string[] | undefined): string[] {
  if (events === undefined || events.includes(allEvents)) return [allEvents];
  const codes = events.map((name, index) => {
    const code = resolveEventCode(name);
    if (code === undefined) {
      throw invalidField(
        `enabledEvents[${index}]`,
        `enabledEvents[${index}] '${name}' is not an event code: ${unknownEventCodeHint(name)}`,
        'event_type',
      );
    }
    return code;
  });
  return [...new Set(codes)];
}
