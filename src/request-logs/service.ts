import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { Db } from '../db/db.js';
import type { PageRequest } from '../db/pagination.js';
import type { MerchantContext } from '../core/merchant-context.js';
import type { ApiRequestRecord } from '../core/api-request-record.js';
import type { Page } from '../core/page.js';
import { newId } from '../ids.js';
import { isoTimestamp } from '../time.js';
import * as queries from './queries.js';
import { failureLevel } from '../db/errors.js';

export interface RequestLog {
  id: string;
  method: string;
  route: string;
  statusCode: number;
  latencyMs: number;
  traceId: string;
  keyKind: 'private' | 'public';
  created: string;
}

/** Rows are kept 30 days (issue 11). */
export const requestLogRetentionMs = 30 * 24 * 60 * 60 * 1000;

export interface RequestLogServiceDeps {
  db: Db;
  clock: Clock;
  logger: FastifyBaseLogger;
  /** A batch is written when it has this many rows, or when the timer comes, whichever first. */
  batchSize?: number;
  flushIntervalMs?: number;
}

/**
 * The API request log (docs/dashboard.md#roles "request logs"): `record` only appends to memory, so a request's
 * own path gains no database write; batches are inserted every 100 ms or every 100 rows, and
 * `close` writes what is left. Small batches often, not large ones seldom: a batch holds PGlite's
 * one connection while it is written, and the API's requests wait behind it (docs/performance.md,
 * "The tail at half the rate"). A failed batch is logged and dropped: the log is a convenience for
 * the merchant's developers, never a reason to slow or fail the API.
 */
export function createRequestLogService({
  db,
  clock,
  logger,
  batchSize = 100,
  flushIntervalMs = 100,
}: RequestLogServiceDeps) {
  let buffer: queries.RequestLogRow[] = [];
  let writing: Promise<void> = Promise.resolve();

  function flush(): Promise<void> {
    if (buffer.length === 0) return writing;
    const batch = buffer;
    buffer = [];
    // Batches are written one after the other, so that close() waits for every one.
    writing = writing.then(() =>
      queries.insertRequestLogs(db, batch).catch((err: unknown) => {
        logger[failureLevel(err)]({ err, rows: batch.length }, 'request log batch not written');
      }),
    );
    return writing;
  }

  const timer = setInterval(() => void flush(), flushIntervalMs);
  timer.unref();

  return {
    record(entry: ApiRequestRecord): void {
      buffer.push({
        id: newId('req'),
        merchant_id: entry.merchant.merchantId,
        mode: entry.merchant.mode,
        method: entry.method,
        route: entry.route,
        status_code: entry.statusCode,
        latency_ms: entry.latencyMs,
        trace_id: entry.traceId,
        key_kind: entry.merchant.keyKind,
        created_at: clock.now(),
      });
      if (buffer.length >= batchSize) void flush();
    },

    /** Writes what is buffered now (tests, and close). */
    flush,

    async list(
      merchant: MerchantContext,
      filter: { statusClass?: number; path?: string },
      page: PageRequest,
    ): Promise<Page<RequestLog>> {
      const { rows, hasMore } = await queries.selectRequestLogPage(
        db,
        { merchantId: merchant.merchantId, mode: merchant.mode, ...filter },
        page,
      );
      return { data: rows.map(toRequestLog), hasMore };
    },

    /** The periodic purge: rows older than 30 days. */
    purgeExpired(): Promise<number> {
      return queries.deleteRequestLogsBefore(db, new Date(clock.now().getTime() - requestLogRetentionMs));
    },

    async close(): Promise<void> {
      clearInterval(timer);
      await flush();
    },
  };
}

function toRequestLog(row: queries.RequestLogRow): RequestLog {
  return {
    id: row.id,
    method: row.method,
    route: row.route,
    statusCode: row.status_code,
    latencyMs: row.latency_ms,
    traceId: row.trace_id,
    keyKind: row.key_kind,
    created: isoTimestamp(row.created_at),
  };
}

export type RequestLogService = ReturnType<typeof createRequestLogService>;
