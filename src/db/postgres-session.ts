import type pg from 'pg';

/*
 * What each pooled connection to PostgreSQL sets for its own session when it is opened
 * (decision 0036).
 *
 * backend_flush_after: a payment's write dirties table and index pages that PostgreSQL hands to the
 * operating system as it needs the buffers back. With the server's default (0) they stay in the
 * kernel's page cache until it writes them back on its own schedule, some hundred megabytes at once
 * under load, and the disk flushes each commit waits for queue behind that burst: a stall of
 * 100–270 ms on the benchmark's machine, which alone set the p99 of a 20-second phase at half the
 * maximum rate. 256 kB (PostgreSQL's default for its checkpointer) asks the kernel to start
 * writing every 256 kB a session writes, so the write-back is spread out. Measured in alternated
 * pairs (docs/decisions/0036-postgres-sessions-write-back-as-they-go.md): a shorter tail and
 * no loss of throughput. An operator's own value, 0 included, is kept: the session's value is
 * changed only while it is PostgreSQL's built-in default (set nowhere: not in the server's
 * configuration, for the database or the role, nor in the connection URL's `options`).
 */
const sessionSettings = `SELECT set_config('backend_flush_after', '256kB', false)
  WHERE (SELECT source FROM pg_settings WHERE name = 'backend_flush_after') = 'default'`;

/**
 * Sets the session settings on a new connection, before the pool hands it out: given to the pool as
 * its `onConnect` hook, which the pool awaits, so the first statement of any request already runs
 * with them and no statement is queued behind one still running (which pg deprecates). A failure is
 * ignored: the settings only shape how writes reach the disk, and a connection that cannot run them
 * fails its next statement on its own.
 */
export async function applySessionSettings(client: pg.ClientBase): Promise<void> {
  await client.query(sessionSettings).catch(() => {});
}
