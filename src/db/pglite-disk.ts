import { lstatSync } from 'node:fs';
import path from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { NodeFS } from '@electric-sql/pglite/nodefs';

/**
 * PGlite's data folder on disk: PGlite's own NodeFS (Emscripten's NODEFS), with one change —
 * a name that does not exist is answered without an exception
 * (docs/decisions/0033-pglite-work-not-done.md).
 *
 * PostgreSQL looks for files that are not there on its hot path: each time a B-tree index needs a
 * new page it asks the index's free space map for one, and an index that never had a page deleted
 * has no free-space-map file, which PostgreSQL checks by opening it again every time. In
 * PostgreSQL on a kernel that open fails in a microsecond. Through NODEFS it was Node's
 * `lstatSync` throwing an error with its stack captured, caught and turned into ENOENT — 3 % of
 * the database thread during MIT payments. Here the look is `lstatSync` with `throwIfNoEntry:
 * false`; a name that exists is looked up by NODEFS itself, as before.
 */
export class PgliteDiskFs extends NodeFS {
  /** Names answered "does not exist" without an exception, for the thread's stats. */
  missingNames = 0;

  override async init(pg: PGlite, opts: Parameters<NodeFS['init']>[1]): ReturnType<NodeFS['init']> {
    const { emscriptenOpts } = await super.init(pg, opts);
    const preRun = [...(emscriptenOpts.preRun ?? []), (mod: unknown) => this.answerMissingNamesQuietly(mod)];
    return { emscriptenOpts: { ...emscriptenOpts, preRun } };
  }

  private answerMissingNamesQuietly(mod: unknown): void {
    const { NODEFS: nodefs, FS: fs } = mod as EmscriptenModule;
    // Another PGlite build without these parts keeps NODEFS's own lookup: slower, not wrong.
    const lookup = nodefs?.node_ops?.lookup;
    if (typeof lookup !== 'function' || typeof nodefs.realPath !== 'function' || !fs?.ErrnoError) return;
    // NODEFS's own translation of Node's error code into Emscripten's errno numbers.
    const noEntry = nodefs.convertNodeCode({ code: 'ENOENT' });
    nodefs.node_ops.lookup = (parent, name) => {
      if (lstatSync(path.join(nodefs.realPath(parent), name), { throwIfNoEntry: false }) === undefined) {
        this.missingNames += 1;
        throw new fs.ErrnoError(noEntry);
      }
      return lookup(parent, name);
    };
  }
}

/** The parts of PGlite's Emscripten module used above (not in PGlite's type definitions). */
interface EmscriptenModule {
  FS?: { ErrnoError: new (errno: number) => Error };
  NODEFS: {
    realPath(node: unknown): string;
    convertNodeCode(error: { code: string }): number;
    node_ops: { lookup(parent: unknown, name: string): unknown };
  };
}
