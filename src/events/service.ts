import type { Clock } from '../clock.js';
import type { Db, Queryable } from '../db/db.js';
import type { Statement } from '../db/held-statements.js';
import type { MerchantContext } from '../core/merchant-context.js';
import { notFound } from '../core/errors.js';
import type { Page } from '../core/page.js';
import { newId } from '../ids.js';
import { isoTimestamp } from '../time.js';
import { resolveEventCode } from './event-types.js';
import { canonicalJson } from './canonical-json.js';
import * as queries from './queries.js';
import type { Event, EventType, ListEventsQuery } from './schemas.js';

/**
 * An event recorded in a transaction. Its stored body is `bodyHead`, its `sequence`, `bodyTail`
 * (docs/webhooks.md): the number is given by the database when the statement runs, so the body as sent
 * is read back from the event's row (webhook deliveries are planned from it in the same
 * transaction).
 */
export interface RecordedEvent {
  id: string;
  type: EventType;
  merchantId: string;
  mode: string;
  bodyHead: string;
  bodyTail: string;
  /** The object the event reports (its `data`). */
  data: Record<string, unknown>;
  /**
   * Where the event goes besides the merchant's endpoints when it is not the object's own
   * `notifyUrl` (a refund's events go to its payment's notifyUrl, docs/webhooks.md#what-is-sent); null otherwise.
   */
  notifyUrl: string | null;
  /**
   * How many webhook deliveries were planned for it, told by the statement that wrote them
   * (webhooks/deliveries/service.ts `plan`) before the transaction commits; undefined when not
   * known. The dispatcher is woken only for events that have some (services.ts).
   */
  deliveriesPlanned?: number;
}

/** What an event may say beyond its object. */
export interface RecordOptions {
  /** The notifyUrl the event is also sent to, when it is not the object's own (see RecordedEvent). */
  notifyUrl?: string | null;
}

/**
 * Listeners run after the transaction that recorded events commits, in this process only (the
 * webhook dispatcher, the metrics). The event stream hears every process's events: feed.ts.
 */
export type EventListener = (events: RecordedEvent[]) => void;

/**
 * Runs inside the transaction that records an event (the webhook engine plans its deliveries
 * here), so that the deliveries exist exactly when the event does. It may answer a statement that
 * runs as part of the event's own insert and reads the new event as `recorded_event` (id, body,
 * sequence): events/queries.ts insertEvent.
 */
export type EventRecorder = (tx: Queryable, event: RecordedEvent) => Promise<Statement | undefined>;

/**
 * The event as sent. Events recorded before `sequence` existed have none in their stored body
 * (it was signed and sent as it is); their number, given by the migration, comes from the column.
 */
function toEvent(row: queries.EventRow): Event {
  const event = JSON.parse(row.body) as Event;
  if (event.sequence === undefined && row.sequence !== null) {
    const { data, ...head } = event;
    return { ...head, sequence: Number(row.sequence), data };
  }
  return event;
}

export function createEventService({ db, clock }: { db: Db; clock: Clock }) {
  const listeners: EventListener[] = [];
  const recorders: EventRecorder[] = [];

  return {
    /**
     * Records an event inside the caller's transaction (docs/architecture.md#the-request-path outbox): it exists exactly when
     * the change it reports was committed. The body is fixed now, in canonical form, so every
     * later delivery of it is byte-identical.
     */
    async record(
      tx: Queryable,
      merchant: Pick<MerchantContext, 'merchantId' | 'mode'>,
      type: EventType,
      object: { id: string } & Record<string, unknown>,
      options: RecordOptions = {},
    ): Promise<RecordedEvent> {
      const now = clock.now();
      const id = newId('evt');
      // docs/webhooks.md#sequence-telling-a-stale-event-from-a-new-one: `sequence` is known only inside the insert (the object's counter), so the body is
      // written around it: {id, apiVersion, type, created, sequence, data} in canonical form.
      const head = canonicalJson({ id, apiVersion: 'v1', type, created: isoTimestamp(now) });
      const bodyHead = `${head.slice(0, -1)},"sequence":`;
      const bodyTail = `,${canonicalJson({ data: object }).slice(1)}`;
      const notifyUrl = options.notifyUrl ?? null;
      const recorded: RecordedEvent = {
        id,
        type,
        merchantId: merchant.merchantId,
        mode: merchant.mode,
        bodyHead,
        bodyTail,
        data: object,
        notifyUrl,
      };
      const then: Statement[] = [];
      for (const recorder of recorders) {
        const statement = await recorder(tx, recorded);
        if (statement) then.push(statement);
      }
      await queries.insertEvent(
        tx,
        {
          id,
          merchant_id: merchant.merchantId,
          mode: merchant.mode,
          type,
          object_id: object.id,
          bodyHead,
          bodyTail,
          notify_url: notifyUrl,
          created_at: now,
        },
        then,
      );
      return recorded;
    },

    /** Adds work done in the same transaction as every recorded event. */
    onRecorded(recorder: EventRecorder): void {
      recorders.push(recorder);
    },

    /** Tells listeners about events whose transaction has committed. */
    published(events: RecordedEvent[]): void {
      if (events.length === 0) return;
      for (const listener of listeners) listener(events);
    },

    /** Adds a listener; the answer removes it again. */
    onPublished(listener: EventListener): () => void {
      listeners.push(listener);
      return () => {
        const at = listeners.indexOf(listener);
        if (at >= 0) listeners.splice(at, 1);
      };
    },

    async retrieve(merchant: MerchantContext, id: string): Promise<Event> {
      const row = await queries.selectEvent(db, merchant.merchantId, merchant.mode, id);
      if (!row) throw notFound('event', id);
      return toEvent(row);
    },

    async list(merchant: MerchantContext, query: ListEventsQuery): Promise<Page<Event>> {
      // docs/webhooks.md#endpoints-and-tokens: a code by either name, in any letter case, filters by the code as stored.
      const type = query.type === undefined ? undefined : (resolveEventCode(query.type) ?? query.type);
      const filters = { type, objectId: query.objectId };
      const { rows, hasMore } = await queries.selectEventPage(db, merchant.merchantId, merchant.mode, filters, query);
      return { data: rows.map(toEvent), hasMore };
    },
  };
}

export type EventService = ReturnType<typeof createEventService>;
