import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Db, Listener } from '../db/db.js';
import * as queries from './queries.js';
import type { EventType } from './schemas.js';

/**
 * The events of every process, for `GET /events/stream` (docs/operations.md#event-stream, docs/operations.md "Event
 * stream"). The events_notify trigger (migration 0140) sends the ids of the events a statement
 * records with NOTIFY on this channel; PostgreSQL delivers them when that transaction commits, to
 * every process that LISTENs. This process LISTENs on one session of its own, opened when its first
 * stream opens and closed when its last one ends; it fetches the events by id and hands each to the
 * streams of its merchant and mode. PGlite takes the same path in its one session (db.ts).
 */
export const eventsChannel = 'tessera_events';

/** After a lost LISTEN session, the next try waits this long, doubling up to retryMaxMs. */
const retryFirstMs = 500;
const retryMaxMs = 15_000;
/**
 * How often the process's mark (tessera_processes.listens_events) is written again while it
 * listens: a process taken for dead after a long pause gets its row back without the mark.
 */
const remarkEveryMs = 10_000;
/**
 * The self-check (PostgreSQL): each time the feed starts listening it NOTIFYs a probe on its channel
 * through the pool, as an event's trigger would, and expects it on its LISTEN session within this.
 * Through PgBouncer in transaction mode, or a LISTEN URL on another database, it never comes.
 */
export const probeTimeoutMs = 5000;
const probePrefix = 'probe.';
/** Ids fetched in one statement at most. */
const fetchBatch = 500;

export interface EventFeedDeps {
  db: Db;
  logger: FastifyBaseLogger;
  /** Marks this process as listening, or not (Heartbeat.listensEvents): the trigger notifies only then. */
  markListening: (listening: boolean) => Promise<void>;
  /** How each self-check ended (tessera_event_stream_probes_total). */
  onProbe?: (outcome: 'received' | 'missing') => void;
}

/** An event as the stream sends it: its stored body, read back after its transaction committed. */
export interface StreamedEvent {
  id: string;
  type: EventType;
  merchantId: string;
  mode: string;
  body: string;
}

interface Subscriber {
  merchantId: string;
  mode: string;
  deliver: (events: StreamedEvent[]) => void;
}

export function createEventFeed({ db, logger, markListening, onProbe }: EventFeedDeps) {
  const subscribers = new Set<Subscriber>();
  let listener: Listener | undefined;
  let opening: Promise<void> | undefined;
  let closing: Promise<void> | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let retryMs = retryFirstMs;
  let remarkTimer: NodeJS.Timeout | undefined;
  // Ids notified and not fetched yet, in the order they came; one fetch runs at a time.
  let pending: string[] = [];
  let draining = false;
  // The probe this process waits for, if any, and whether the last one failed (warned once per failure run).
  let probe: { payload: string; timer: NodeJS.Timeout } | undefined;
  let probeFailed = false;

  async function drain(): Promise<void> {
    if (draining) return;
    draining = true;
    try {
      while (pending.length > 0) {
        const ids = pending.slice(0, fetchBatch);
        pending = pending.slice(ids.length);
        if (subscribers.size === 0) continue;
        const rows = await queries.selectEventsByIds(db, ids);
        // In the order of the notifications: the order their transactions committed.
        const byId = new Map(rows.map((row) => [row.id, row]));
        const events: StreamedEvent[] = [];
        for (const id of ids) {
          const row = byId.get(id);
          if (!row) continue;
          events.push({
            id: row.id,
            type: row.type as EventType,
            merchantId: row.merchant_id,
            mode: row.mode,
            body: row.body,
          });
        }
        for (const subscriber of subscribers) {
          const own = events.filter(
            (event) => event.merchantId === subscriber.merchantId && event.mode === subscriber.mode,
          );
          if (own.length > 0) subscriber.deliver(own);
        }
      }
    } catch (err) {
      // The database answered no (an outage): these events are not streamed; GET /events has them.
      logger.warn({ err }, 'events named by a notification could not be read for the event stream');
      pending = [];
    } finally {
      draining = false;
    }
  }

  function startProbe(): void {
    if (db.kind !== 'postgres' || probe) return;
    const payload = `${probePrefix}${randomBytes(8).toString('hex')}`;
    const timer = setTimeout(() => {
      if (probe?.payload !== payload) return;
      probe = undefined;
      onProbe?.('missing');
      if (probeFailed) return;
      probeFailed = true;
      logger.warn(
        `GET /events/stream gets no events: a NOTIFY sent through DATABASE_URL did not reach the LISTEN session within ${probeTimeoutMs} ms (PgBouncer in transaction mode?); set TESSERA_LISTEN_DATABASE_URL to a direct or session-mode connection to the same database`,
      );
    }, probeTimeoutMs);
    timer.unref();
    probe = { payload, timer };
    db.query('SELECT pg_notify($1, $2)', [eventsChannel, payload]).catch((err: unknown) => {
      logger.warn({ err }, 'the event stream self-check could not send its probe');
    });
  }

  function notified(payload: string): void {
    if (payload === '') return;
    if (payload.startsWith(probePrefix)) {
      // Probes of other processes come here too; only this process's own is waited for.
      if (probe?.payload !== payload) return;
      clearTimeout(probe.timer);
      probe = undefined;
      probeFailed = false;
      onProbe?.('received');
      return;
    }
    pending.push(...payload.split(','));
    void drain();
  }

  function lost(err: Error): void {
    listener = undefined;
    clearInterval(remarkTimer);
    remarkTimer = undefined;
    if (subscribers.size === 0) return;
    logger.warn({ err }, 'the event stream lost its LISTEN connection; it reconnects');
    retryLater();
  }

  function retryLater(): void {
    if (retryTimer || subscribers.size === 0) return;
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      ensureOpen().then(
        () => {
          retryMs = retryFirstMs;
          logger.info('the event stream listens again');
        },
        () => {
          retryMs = Math.min(retryMs * 2, retryMaxMs);
          retryLater();
        },
      );
    }, retryMs);
    retryTimer.unref();
  }

  async function connect(): Promise<void> {
    // A LISTEN being closed ends first: on PGlite's one session its UNLISTEN would end the new one.
    await closing;
    let gone = false;
    const opened: Listener = await db.listen(eventsChannel, {
      notify: notified,
      lost: (err) => {
        gone = true;
        if (listener === opened) lost(err);
      },
    });
    if (subscribers.size === 0) {
      await opened.close();
      return;
    }
    try {
      // After LISTEN: a transaction that sees the mark notifies a session that already listens.
      await markListening(true);
    } catch (err) {
      await opened.close();
      throw err;
    }
    if (gone) throw new Error('The LISTEN connection ended as it opened');
    listener = opened;
    remarkTimer = setInterval(() => {
      markListening(true).catch((err: unknown) => logger.warn({ err }, 'the event stream mark could not be written'));
    }, remarkEveryMs);
    remarkTimer.unref();
    startProbe();
  }

  function ensureOpen(): Promise<void> {
    if (listener) return Promise.resolve();
    opening ??= connect().finally(() => {
      opening = undefined;
    });
    return opening;
  }

  function closeListener(): Promise<void> {
    closing = closeOpenListener().finally(() => {
      closing = undefined;
    });
    return closing;
  }

  async function closeOpenListener(): Promise<void> {
    clearTimeout(retryTimer);
    retryTimer = undefined;
    clearInterval(remarkTimer);
    remarkTimer = undefined;
    await opening?.catch(() => {});
    clearTimeout(probe?.timer);
    probe = undefined;
    const open = listener;
    listener = undefined;
    if (!open) return;
    await markListening(false).catch(() => {});
    await open.close();
  }

  return {
    /**
     * Hands `deliver` the events of `merchantId` and `mode` recorded by any process from now on;
     * answers once this process listens (so that an event recorded after the answer is seen), or
     * throws when the database cannot be reached. The answer's function ends the subscription.
     */
    async subscribe(merchantId: string, mode: string, deliver: Subscriber['deliver']): Promise<() => void> {
      const subscriber: Subscriber = { merchantId, mode, deliver };
      subscribers.add(subscriber);
      const end = () => {
        if (!subscribers.delete(subscriber)) return;
        if (subscribers.size === 0) {
          closeListener().catch((err: unknown) => logger.warn({ err }, 'the event stream LISTEN could not be closed'));
        }
      };
      try {
        await ensureOpen();
      } catch (err) {
        end();
        throw err;
      }
      return end;
    },

    /** Ends listening (the process stops; its streams have ended). */
    async close(): Promise<void> {
      subscribers.clear();
      await closeListener();
    },
  };
}

export type EventFeed = ReturnType<typeof createEventFeed>;
