/**
 * The INSERTs a transaction holds back (Queryable.execute) and sends as one statement, with the
 * transaction's next `query` or its commit: one round trip instead of one each (decision 0004,
 * measured again in 0006). A held insert's error is raised where the combined statement runs, but
 * attributed to the insert that caused it: see `attribute`.
 */
export interface Statement {
  sql: string;
  params: readonly unknown[];
}

interface Held extends Statement {
  /** Made at the execute call, for its stack: where the insert was given. */
  givenAt: Error;
}

/** An error of a combined statement, attributed to one of its inserts. */
export interface AttributedError extends Error {
  /** The SQL of the held insert that failed, as given to execute. */
  statement?: string;
}

export function heldInserts() {
  const held: Held[] = [];
  return {
    hold(sql: string, params: readonly unknown[] = []): void {
      if (!/^\s*INSERT\s/i.test(sql)) throw new Error('Only INSERT statements can be held back in a transaction');
      held.push({ sql, params, givenAt: new Error('held insert') });
    },
    /**
     * Runs what is held, as one statement, through `run`, and holds nothing any more. Its error is
     * attributed to the insert that caused it.
     */
    async send(run: (statement: Statement) => Promise<unknown>): Promise<void> {
      if (held.length === 0) return;
      const sent = held.splice(0);
      try {
        await run(combineInserts(sent));
      } catch (err) {
        throw attribute(err, sent);
      }
    },
  };
}

const insertTarget = (sql: string) => /^\s*INSERT\s+INTO\s+("?)([\w.]+)\1/i.exec(sql)?.[2]?.split('.').pop();

/**
 * The database names the table of a failed constraint (`table`); the one held insert into that
 * table (or the only insert) is the culprit. Its SQL becomes the error's `statement` and the error's
 * stack is the one of its execute call, so that the error reads as if raised there.
 */
function attribute(err: unknown, sent: readonly Held[]): unknown {
  if (!(err instanceof Error)) return err;
  const table = (err as { table?: unknown }).table;
  const intoTable = typeof table === 'string' ? sent.filter((each) => insertTarget(each.sql) === table) : [];
  const culprit = intoTable.length === 1 ? intoTable[0] : sent.length === 1 ? sent[0] : undefined;
  if (!culprit) return err;
  const attributed = err as AttributedError;
  attributed.statement = culprit.sql;
  const frames = (culprit.givenAt.stack ?? '').split('\n').slice(1).join('\n');
  attributed.stack = `${err.name}: ${err.message}\n${frames}`;
  return attributed;
}

/**
 * Several INSERTs as one statement: all but the last become data-modifying WITH queries, which
 * PostgreSQL runs exactly once each, to completion, whether or not anything reads them. Their
 * placeholders are renumbered so that the parameters follow one another. The inserts all see the
 * database as it was before the statement, so none may read (INSERT … SELECT) a table that another
 * of them writes; foreign keys between them are checked at the end of the statement and hold.
 */
export function combineInserts(statements: readonly Statement[]): Statement {
  if (statements.length === 1) return { sql: statements[0]!.sql, params: statements[0]!.params };
  const params = statements.flatMap((statement) => statement.params);
  // The same few sequences of statements recur (a payment, its event, its deliveries): their
  // combined text is built once, and is then the same string, whose prepared name is known.
  let node = combinedTexts;
  for (const statement of statements) {
    let next = node.next.get(statement.sql);
    if (!next) {
      if (combinedCount >= maxCombinedTexts) return { sql: combinedText(statements), params };
      next = { next: new Map() };
      node.next.set(statement.sql, next);
      combinedCount += 1;
    }
    node = next;
  }
  const widths = statements.map((statement) => statement.params.length).join(',');
  if (node.sql === undefined || node.widths !== widths) {
    node.sql = combinedText(statements);
    node.widths = widths;
  }
  return { sql: node.sql, params };
}

interface CombinedText {
  next: Map<string, CombinedText>;
  sql?: string;
  /** The parameter count of each statement the text was built for. */
  widths?: string;
}

const combinedTexts: CombinedText = { next: new Map() };
let combinedCount = 0;
const maxCombinedTexts = 1000;

function combinedText(statements: readonly Statement[]): string {
  let offset = 0;
  const parts = statements.map((statement) => {
    const shift = offset;
    offset += statement.params.length;
    return statement.sql.replace(/\$(\d+)/g, (_, index: string) => `$${Number(index) + shift}`);
  });
  const last = parts.pop()!;
  return `WITH ${parts.map((part, index) => `i${index} AS (${part})`).join(', ')} ${last}`;
}
