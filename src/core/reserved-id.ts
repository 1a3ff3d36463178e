/**
 * An object id for a request to create with, reserved by the request's idempotency claim
 * (src/http/idempotency.ts, docs/decisions/0003): `earlier` when an attempt that died reserved it,
 * so that the service answers what that attempt created instead of creating it twice.
 */
export interface ReservedId {
  id: string;
  earlier: boolean;
}
