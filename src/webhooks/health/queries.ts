import type { Queryable } from '../../db/db.js';
import type { Transition } from '../../state-table.js';
import type { DisabledReason, EndpointHealth, EndpointStatus } from './states.js';

/*
 * The health statements on webhook_endpoints (docs/decisions/0016). The delivery engine writes
 * failing_since, last_error and last_success_at with each group of attempts (engine/queries.ts);
 * these read them, send the alerts and disable endpoints.
 */

/** What an alert or a "disabled" e-mail says about an endpoint. */
export interface EndpointHealthRow {
  id: string;
  merchant_id: string;
  mode: string;
  kind: 'static' | 'dynamic';
  url: string | null;
  description: string | null;
  status: EndpointStatus;
  failing_since: Date | null;
  last_error: string | null;
  disabled_reason: DisabledReason | null;
  deleted_at: Date | null;
  next_attempt_at: Date | null;
}

export async function selectEndpointHealth(db: Queryable, id: string): Promise<EndpointHealthRow | undefined> {
  const [row] = await db.query<EndpointHealthRow>(
    `SELECT id, merchant_id, mode, kind, url, description, status, failing_since, last_error, disabled_reason, deleted_at,
       (SELECT min(d.next_attempt_at) FROM webhook_deliveries d
         WHERE d.endpoint_id = webhook_endpoints.id AND d.status = 'pending') AS next_attempt_at
     FROM webhook_endpoints WHERE id = $1`,
    [id],
  );
  return row;
}

/**
 * Disables every static endpoint that has failed since before `failingBefore`: a conditional
 * update, so of several processes sweeping at once each endpoint is disabled (and mailed) once.
 * The dynamic endpoint is never disabled this way: its deliveries go to many payments' notifyUrl,
 * and one dead shop URL must not silence the others.
 */
export async function disableLongFailing(
  db: Queryable,
  move: Transition<EndpointStatus>,
  failingBefore: Date,
  now: Date,
): Promise<string[]> {
  const rows = await db.query<{ id: string }>(
    `UPDATE webhook_endpoints SET status = $1, disabled_reason = 'failing', disabled_at = $3, updated_at = $3
     WHERE failing_since IS NOT NULL AND deleted_at IS NULL AND failing_since <= $4 AND kind = 'static'
       AND status = ANY($2::text[])
     RETURNING id`,
    [move.to, move.from, now, failingBefore],
  );
  return rows.map((row) => row.id);
}

/** Disables one static endpoint at once (HTTP 410 Gone); false when it was not enabled. */
export async function disableGone(
  db: Queryable,
  move: Transition<EndpointStatus>,
  id: string,
  now: Date,
): Promise<boolean> {
  const rows = await db.query(
    `UPDATE webhook_endpoints SET status = $1, disabled_reason = 'gone', disabled_at = $3, updated_at = $3
     WHERE id = $4 AND deleted_at IS NULL AND kind = 'static' AND status = ANY($2::text[])
     RETURNING id`,
    [move.to, move.from, now, id],
  );
  return rows.length > 0;
}

/**
 * Claims the alerts that are due: endpoints failing since before `failingBefore` that were not
 * alerted since `alertedBefore` (a day ago). The conditional update makes one process send each.
 */
export async function claimDueAlerts(
  db: Queryable,
  failingBefore: Date,
  alertedBefore: Date,
  now: Date,
): Promise<string[]> {
  const rows = await db.query<{ id: string }>(
    `UPDATE webhook_endpoints SET alerted_at = $3
     WHERE failing_since IS NOT NULL AND deleted_at IS NULL AND failing_since <= $1 AND status = 'enabled'
       AND (alerted_at IS NULL OR alerted_at <= $2)
     RETURNING id`,
    [failingBefore, alertedBefore, now],
  );
  return rows.map((row) => row.id);
}

/** Live endpoints of every merchant by health (the tessera_webhook_endpoints{health} gauge). */
export async function countByHealth(db: Queryable): Promise<Array<{ health: EndpointHealth; count: string | number }>> {
  return db.query(
    `SELECT CASE WHEN status = 'disabled' THEN 'disabled' WHEN failing_since IS NOT NULL THEN 'failing' ELSE 'healthy' END
              AS health,
            count(*) AS count
     FROM webhook_endpoints WHERE deleted_at IS NULL GROUP BY 1`,
  );
}

/** One merchant's endpoints that need attention: failing, or disabled by Tessera. */
export async function selectNeedingAttention(
  db: Queryable,
  merchantId: string,
  mode: string,
): Promise<EndpointHealthRow[]> {
  return db.query<EndpointHealthRow>(
    `SELECT id, merchant_id, mode, kind, url, description, status, failing_since, last_error, disabled_reason, deleted_at,
       (SELECT min(d.next_attempt_at) FROM webhook_deliveries d
         WHERE d.endpoint_id = webhook_endpoints.id AND d.status = 'pending') AS next_attempt_at
     FROM webhook_endpoints
     WHERE merchant_id = $1 AND mode = $2 AND deleted_at IS NULL
       AND ((status = 'enabled' AND failing_since IS NOT NULL) OR (status = 'disabled' AND disabled_reason IS NOT NULL))
     ORDER BY created_at, id LIMIT 20`,
    [merchantId, mode],
  );
}
