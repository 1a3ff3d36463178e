import { parse, protocol, type PGlite } from '@electric-sql/pglite';

type Parsers = PGlite['parsers'];

interface Prepared {
  name: string;
  /** The type of each parameter, as PostgreSQL inferred it, for PGlite's serializers. */
  parameterTypes: number[];
}

/**
 * Named prepared statements for PGlite. Its query() parses and plans the statement again on
 * every call and enters the WebAssembly backend six times (parse, describe, bind, describe,
 * execute, sync); here each statement text is prepared once, under a name derived from it as on
 * PostgreSQL, and then each call is one message (bind, describe, execute, sync) and one entry.
 * Rows are serialized and parsed by PGlite's own serializers and parsers, as query() does.
 *
 * PGlite runs one statement at a time on its one connection: outside a transaction a call waits
 * for any open transaction and for the statement running (as query() does); inside one, whose
 * holder already excludes the others, only for the statement running.
 */
export function createPgliteStatements(lite: PGlite, parsers: Parsers) {
  const prepared = new Map<string, Prepared>();
  let count = 0;

  async function send(...messages: Uint8Array[]) {
    const results = await lite.execProtocolStream(concat(messages), { syncToFs: false });
    // An error answers the statement; the Sync in the same message has already ended it.
    const error = results.find((message) => message.name === 'error');
    if (error) throw error;
    return results;
  }

  async function prepare(sql: string): Promise<Prepared> {
    const known = prepared.get(sql);
    if (known) return known;
    const name = `p${++count}`;
    const results = await send(
      protocol.serialize.parse({ name, text: sql, types: [] }),
      protocol.serialize.describe({ type: 'S', name }),
      protocol.serialize.sync(),
    );
    const statement = { name, parameterTypes: parse.parseDescribeStatementResults(results) };
    prepared.set(sql, statement);
    return statement;
  }

  async function runPrepared<Row>(sql: string, params: readonly unknown[]): Promise<Row[]> {
    const statement = await prepare(sql);
    const values = params.map((value, index) => {
      if (value === null || value === undefined) return null;
      const serialize = lite.serializers[statement.parameterTypes[index] ?? 0];
      return serialize ? serialize(value) : String(value);
    });
    const results = await send(
      protocol.serialize.bind({ statement: statement.name, values }),
      protocol.serialize.describe({ type: 'P' }),
      protocol.serialize.execute({}),
      protocol.serialize.sync(),
    );
    return (parse.parseResults(results, parsers)[0]?.rows ?? []) as Row[];
  }

  return {
    /** Runs `sql` outside any transaction. */
    async query<Row>(sql: string, params: readonly unknown[]): Promise<Row[]> {
      const rows = await lite._runExclusiveTransaction(() =>
        lite._runExclusiveQuery(() => runPrepared<Row>(sql, params)),
      );
      await lite.syncToFs();
      return rows;
    },
    /** Runs `sql` inside the transaction the caller holds open. */
    queryInTransaction<Row>(sql: string, params: readonly unknown[]): Promise<Row[]> {
      return lite._runExclusiveQuery(() => runPrepared<Row>(sql, params));
    },
  };
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const joined = new Uint8Array(parts.reduce((length, part) => length + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    joined.set(part, offset);
    offset += part.length;
  }
  return joined;
}
