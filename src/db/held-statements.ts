/**
 * The statements a transaction holds back (Queryable.execute): statements whose rows are not
 * needed, sent with the transaction's next `query` or its commit rather than one round trip each
 * (decisions 0004, 0006 and 0029). They are sent in the order given, as few statements as can be:
 * a run of plain INSERTs, and the statement with WITH queries of its own that may end the run (an
 * event's insert), is one statement; any other statement goes alone. On PGlite all of them travel
 * in the message of that query or commit. A held statement's error is raised where it is sent, but
 * attributed to the statement that caused it: see `attribute`.
 */
export interface Statement {
  sql: string;
  params: readonly unknown[];
  /**
   * Told how many rows the statement wrote (its command tag's count) once it has run, when that
   * is known: a held statement's count is known when it is the last of the one statement it is
   * sent in (see `countOf`), which an event's insert always is.
   */
  onRowCount?: (count: number) => void;
}

interface Held extends Statement {
  /** Made at the execute call, for its stack: where the statement was given. */
  givenAt: Error;
}

/** One statement to send, and the held statements it was made of (one, or a run: see batchesOf). */
export interface Batch extends Statement {
  held: readonly Held[];
}

/** An error of a sent statement, attributed to one of the held statements. */
export interface AttributedError extends Error {
  /** The SQL of the held statement that failed, as given to execute. */
  statement?: string;
}

export function heldStatements() {
  let held: Held[] = [];
  return {
    hold(sql: string, params: readonly unknown[] = [], onRowCount?: (count: number) => void): void {
      held.push({ sql, params, givenAt: new Error('held statement'), onRowCount });
    },
    /** What is held, as the statements to send in order; nothing is held any more. */
    take(): Batch[] {
      if (held.length === 0) return [];
      const sent = held;
      held = [];
      return batchesOf(sent);
    },
  };
}

const plainInsert = /^\s*INSERT\s/i;
const withQueries = /^\s*WITH\s+(?!RECURSIVE\b)/i;

/**
 * Consecutive plain INSERTs, and a statement with WITH queries of its own right after them, become
 * one statement (combineRun): they share one snapshot, so none of them may read what another
 * of them writes. Any other statement is sent alone. A statement sent later sees what earlier ones
 * wrote.
 */
function batchesOf(held: readonly Held[]): Batch[] {
  const batches: Batch[] = [];
  let run: Held[] = [];
  const flush = () => {
    if (run.length === 0) return;
    batches.push({ ...combineRun(run), held: run });
    run = [];
  };
  for (const each of held) {
    if (plainInsert.test(each.sql)) {
      run.push(each);
    } else if (withQueries.test(each.sql)) {
      run.push(each);
      flush();
    } else {
      flush();
      batches.push({ sql: each.sql, params: each.params, held: [each] });
    }
  }
  flush();
  return batches;
}

/**
 * A sent batch's count (its command tag's) is that of the last statement it was made of, whose
 * rows the combined statement answers with; the statements before it (WITH queries) have none.
 */
export function countOf(batch: Batch, count: number | undefined): void {
  if (count === undefined) return;
  batch.held[batch.held.length - 1]?.onRowCount?.(count);
}

/** The tables a statement inserts into or updates, by name without schema. */
function writtenTables(sql: string): string[] {
  const tables: string[] = [];
  for (const match of sql.matchAll(/\b(?:INSERT\s+INTO|UPDATE)\s+("?)([\w.]+)\1/gi)) {
    tables.push(match[2]!.split('.').pop()!);
  }
  return tables;
}

/**
 * The database names the table of a failed constraint (`table`); the one held statement that
 * writes that table (or the only statement) is the culprit. Its SQL becomes the error's
 * `statement` and the error's stack is the one of its execute call, so that the error reads as if
 * raised there.
 */
export function attribute(err: unknown, sent: readonly Held[]): unknown {
  if (!(err instanceof Error)) return err;
  const table = (err as { table?: unknown }).table;
  const intoTable = typeof table === 'string' ? sent.filter((each) => writtenTables(each.sql).includes(table)) : [];
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
 * PostgreSQL runs exactly once each, to completion, whether or not anything reads them; a last
 * statement with WITH queries of its own adds them to the list. Placeholders are renumbered so that
 * the parameters follow one another. The parts all see the database as it was before the
 * statement, so none may read (INSERT … SELECT) a table that another of them writes; foreign keys
 * between them are checked at the end of the statement and hold.
 */
function combineRun(statements: readonly Statement[]): Statement {
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
  const { queries, last } = asWithQueries(statements, 'i');
  // A last statement with WITH queries of its own: they follow the inserts' in one list.
  const own = withQueries.exec(last);
  return own ? `WITH ${queries.join(', ')}, ${last.slice(own[0].length)}` : `WITH ${queries.join(', ')} ${last}`;
}

/**
 * Statements to be written as one: all but the last as WITH queries named `<prefix>0`, `<prefix>1`,
 * …, and the last as it is. Placeholders are renumbered so that each statement's parameters follow
 * those of the statements before it, and all of them `shift` parameters of the text they join.
 */
export function asWithQueries(
  statements: readonly Statement[],
  prefix: string,
  shift = 0,
): { queries: string[]; last: string } {
  let offset = shift;
  const parts = statements.map((statement) => {
    const from = offset;
    offset += statement.params.length;
    return from === 0
      ? statement.sql
      : statement.sql.replace(/\$(\d+)/g, (_, index: string) => `$${Number(index) + from}`);
  });
  const last = parts.pop()!;
  return { queries: parts.map((part, index) => `${prefix}${index} AS (${part})`), last };
}
