import { defineStateTable } from '../../state-table.js';

/*
 * An endpoint's status and health (issue 20, docs/webhooks.md#endpoint-health, docs/decisions/0016). `status` is what
 * the merchant or Tessera set (enabled | disabled); `health` is what the delivery engine saw:
 * healthy, failing (every attempt since failingSince has failed), or disabled.
 */

export const endpointStatuses = ['enabled', 'disabled'] as const;
export type EndpointStatus = (typeof endpointStatuses)[number];

export const endpointHealths = ['healthy', 'failing', 'disabled'] as const;
export type EndpointHealth = (typeof endpointHealths)[number];

/** Why Tessera disabled an endpoint: five days of nothing but failures, or an HTTP 410 (gone). */
export const disabledReasons = ['failing', 'gone'] as const;
export type DisabledReason = (typeof disabledReasons)[number];

export const endpointStates = defineStateTable({
  name: 'webhook_endpoints',
  statuses: endpointStatuses,
  transitions: { enabled: ['disabled'], disabled: ['enabled'] },
  operations: {
    /** Tessera disables an endpoint that has failed too long, or answered 410 Gone. */
    autoDisable: { from: ['enabled'], to: ['disabled'] },
  },
});

export function endpointHealth(status: EndpointStatus, failingSince: Date | null | undefined): EndpointHealth {
  if (status === 'disabled') return 'disabled';
  return failingSince ? 'failing' : 'healthy';
}
