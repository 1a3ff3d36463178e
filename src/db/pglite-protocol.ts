import { createRequire } from 'node:module';
import { types } from '@electric-sql/pglite';
import { serialize } from 'pg-protocol';

/**
 * The main thread's half of the PGlite wire protocol (docs/decisions/0020-pglite-prepared-statements.md):
 * it writes each statement as PostgreSQL's extended-protocol messages (a named statement is parsed
 * once, then only bound and executed) and reads the worker's answer, one buffer of raw protocol
 * messages, into rows. The worker only hands the bytes to PGlite's public `execProtocolRawStream`, so
 * the encoding and the row parsing run on this thread and the database thread does database work.
 */

// Parameters are written as the `pg` driver writes them on PostgreSQL (text, or binary for a
// Buffer), so that both stores see the same values from the same code. The messages are written
// by `pg`'s own serializer (pg-protocol), which writes into pooled Buffers with Node's native
// string encoding; PGlite's port of it grows a fresh ArrayBuffer per message and counts each
// string's UTF-8 length character by character, which cost the main thread about a tenth of its
// time per payment (docs/decisions/0020-pglite-prepared-statements.md).
const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as {
  prepareValue(value: unknown): string | Buffer | null;
};

const INT8_OID = 20;
const NUMERIC_OID = 1700;

/** An element type and its array type, as pg_type lists them (the worker reads them at start). */
export interface ArrayType {
  oid: number;
  typarray: number;
}

type Parse = (text: string, typeId?: number) => unknown;

/**
 * PGlite's own parsers, as its query() used them: int8 and numeric as strings (money never passes
 * through a float, as on PostgreSQL), and arrays of every listed element type.
 */
export function rowParsers(arrayTypes: readonly ArrayType[]): Map<number, Parse> {
  const parsers = new Map<number, Parse>();
  for (const [oid, parse] of Object.entries(types.parsers)) parsers.set(Number(oid), parse);
  const identity = (value: string) => value;
  parsers.set(INT8_OID, identity);
  parsers.set(NUMERIC_OID, identity);
  for (const { oid, typarray } of arrayTypes) {
    const element = parsers.get(oid);
    parsers.set(typarray, (value) => types.arrayParser(value, element ?? identity, typarray));
  }
  return parsers;
}

/** Most distinct statements kept prepared; past it, a new text runs as the unnamed statement. */
const maxPrepared = 1000;

/**
 * Writes statements as protocol messages, naming each parameterized text once. A name is used
 * without its Parse only once that Parse is known to have run (`settle`), or in the same message
 * that parses it: the worker runs an open transaction's requests before earlier ones of others
 * (pglite-worker.ts), so a message written later may run before the one that parses the name.
 * Until then the text runs as the unnamed statement.
 */
export function statementWriter() {
  /** Each named text, and whether its Parse is known to have run. */
  const prepared = new Map<string, { name: string; parsed: boolean }>();
  /** Names parsed earlier in the message being written (see `message`). */
  const inThisMessage = new Set<string>();
  let lastName = 0;
  return {
    /** A new message begins: names parsed in the one before are no longer in flight with it. */
    message() {
      inThisMessage.clear();
    },
    /**
     * One statement's messages, ending with Sync: Parse (the first time, each time for a
     * statement without parameters, which runs unnamed like BEGIN or DDL, and while the name's
     * Parse is in flight in another message), Bind, Describe (so that the answer names its
     * columns), Execute. `parses` says whether it has a Parse; `parsedAs` is the text newly named,
     * to be settled by the answer.
     */
    statement(
      sql: string,
      params: readonly unknown[] | undefined,
    ): { parts: Uint8Array[]; parses: boolean; parsedAs?: string } {
      const values = params && params.length > 0 ? params.map((value) => prepareValue(value)) : [];
      const known = values.length > 0 ? prepared.get(sql) : undefined;
      let name: string;
      const parts: Uint8Array[] = [];
      let parsedAs: string | undefined;
      if (known && (known.parsed || inThisMessage.has(known.name))) {
        name = known.name;
      } else if (values.length > 0 && !known && prepared.size < maxPrepared) {
        name = `s${(lastName += 1)}`;
        prepared.set(sql, { name, parsed: false });
        inThisMessage.add(name);
        parsedAs = sql;
        parts.push(serialize.parse({ name, text: sql }));
      } else {
        name = '';
        parts.push(serialize.parse({ text: sql }));
      }
      parts.push(
        serialize.bind({ statement: name, values }),
        serialize.describe({ type: 'P' }),
        serialize.execute({}),
        serialize.sync(),
      );
      return { parts, parses: parts.length === 5, parsedAs };
    },
    /**
     * The answer to a text's Parse: it ran (the name is used without Parse from now on), or it
     * failed or was never run (the text is forgotten, to be parsed again next time).
     */
    settle(sql: string, ran: boolean) {
      const known = prepared.get(sql);
      if (!known) return;
      if (ran) known.parsed = true;
      else prepared.delete(sql);
    },
  };
}

export const simpleQuery = (sql: string) => serialize.query(sql);

export function concat(parts: readonly Uint8Array[]): Uint8Array {
  let length = 0;
  for (const part of parts) length += part.length;
  const message = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    message.set(part, offset);
    offset += part.length;
  }
  return message;
}

/** The fields of PostgreSQL's ErrorResponse, named as the `pg` driver names them. */
const errorFields: Record<string, string> = {
  S: 'severity',
  C: 'code',
  D: 'detail',
  H: 'hint',
  P: 'position',
  p: 'internalPosition',
  q: 'internalQuery',
  W: 'where',
  s: 'schema',
  t: 'table',
  c: 'column',
  d: 'dataType',
  n: 'constraint',
  F: 'file',
  L: 'line',
  R: 'routine',
};

export interface Reply {
  /** The rows of the last statement that completed. */
  rows: Record<string, unknown>[];
  /**
   * The first ErrorResponse: its message and its fields (code, constraint, detail, table, …),
   * and how many commands completed before it (which of the message's statements failed).
   */
  error?: { message: string; fields: Record<string, string>; completedBefore: number };
  /** How many ParseCompletes came back: the Parses of the message that succeeded, in order. */
  parsed: number;
  /** The last CommandComplete's tag (COMMIT answers ROLLBACK when the transaction had failed). */
  lastCommand?: string;
  /** Each CommandComplete's row count, in order (`INSERT 0 3` → 3); undefined for a tag without one (`BEGIN`). */
  counts: Array<number | undefined>;
  /**
   * The NotificationResponses (NOTIFY on a channel this session LISTENs to), which come in the
   * answer of the statement that delivered them: the COMMIT of the transaction that sent them.
   */
  notifications: Array<{ channel: string; payload: string }>;
}

/** The row count a command tag ends with (`INSERT 0 3`, `UPDATE 2`, `SELECT 1`), if any. */
function countOfTag(tag: string): number | undefined {
  const space = tag.lastIndexOf(' ');
  if (space < 0) return undefined;
  const count = Number(tag.slice(space + 1));
  return Number.isInteger(count) ? count : undefined;
}

/**
 * Reads the messages of one answer, which may hold several statements' answers: the rows of the
 * last statement that completed, parsed by their column types; the first error and where it came;
 * how many Parses completed; the last command tag; the notifications.
 */
export function readReply(data: Uint8Array, parsers: ReadonlyMap<number, Parse>): Reply {
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const reply: Reply = { rows: [], parsed: 0, notifications: [], counts: [] };
  let rows: Record<string, unknown>[] = [];
  let completed = 0;
  let names: string[] = [];
  let typeIds: number[] = [];
  let offset = 0;
  while (offset + 5 <= bytes.length) {
    const type = bytes[offset]!;
    const end = offset + 1 + bytes.readInt32BE(offset + 1);
    let at = offset + 5;
    switch (type) {
      case 0x44: {
        // DataRow
        const count = bytes.readInt16BE(at);
        at += 2;
        const row: Record<string, unknown> = {};
        for (let index = 0; index < count; index += 1) {
          const length = bytes.readInt32BE(at);
          at += 4;
          if (length < 0) {
            row[names[index]!] = null;
            continue;
          }
          const text = bytes.toString('utf8', at, at + length);
          at += length;
          const typeId = typeIds[index]!;
          const parse = parsers.get(typeId);
          row[names[index]!] = parse ? parse(text, typeId) : text;
        }
        rows.push(row);
        break;
      }
      case 0x54: {
        // RowDescription
        const count = bytes.readInt16BE(at);
        at += 2;
        names = new Array<string>(count);
        typeIds = new Array<number>(count);
        rows = [];
        for (let index = 0; index < count; index += 1) {
          const nameEnd = bytes.indexOf(0, at);
          names[index] = bytes.toString('utf8', at, nameEnd);
          at = nameEnd + 1 + 6;
          typeIds[index] = bytes.readInt32BE(at);
          at += 12;
        }
        break;
      }
      case 0x45: {
        // ErrorResponse
        if (reply.error) break;
        const fields: Record<string, string> = {};
        let message = '';
        while (bytes[at] !== 0 && at < end) {
          const code = String.fromCharCode(bytes[at]!);
          const valueEnd = bytes.indexOf(0, at + 1);
          const value = bytes.toString('utf8', at + 1, valueEnd);
          at = valueEnd + 1;
          if (code === 'M') message = value;
          else if (errorFields[code]) fields[errorFields[code]] = value;
        }
        reply.error = { message, fields, completedBefore: completed };
        break;
      }
      case 0x43:
        // CommandComplete
        reply.lastCommand = bytes.toString('utf8', at, end - 1);
        reply.counts.push(countOfTag(reply.lastCommand));
        reply.rows = rows;
        rows = [];
        completed += 1;
        break;
      case 0x31:
        // ParseComplete
        reply.parsed += 1;
        break;
      case 0x41: {
        // NotificationResponse: the sender's pid, then the channel and the payload
        const channelEnd = bytes.indexOf(0, at + 4);
        reply.notifications.push({
          channel: bytes.toString('utf8', at + 4, channelEnd),
          payload: bytes.toString('utf8', channelEnd + 1, bytes.indexOf(0, channelEnd + 1)),
        });
        break;
      }
      default:
        break;
    }
    offset = end;
  }
  return reply;
}
