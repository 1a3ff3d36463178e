import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stale } from '../scripts/stale.mjs';

describe('build staleness (npm start skips the build when nothing changed)', () => {
  let root: string;
  const at = (name: string) => path.join(root, name);
  const past = new Date('2026-01-01T00:00:00.000Z');
  const built = new Date('2026-01-02T00:00:00.000Z');
  const later = new Date('2026-01-03T00:00:00.000Z');

  /** A src/ folder (with migrations) and a stamp, every input older than the stamp. */
  function freshTree() {
    rmSync(at('src'), { recursive: true, force: true });
    mkdirSync(at('src/migrations'), { recursive: true });
    writeFileSync(at('src/app.ts'), 'export {};\n');
    writeFileSync(at('src/migrations/0001_init.sql'), 'select 1;\n');
    mkdirSync(at('dist'), { recursive: true });
    writeFileSync(at('dist/.build-stamp'), '');
    for (const entry of ['src/app.ts', 'src/migrations/0001_init.sql', 'src/migrations', 'src']) {
      utimesSync(at(entry), past, past);
    }
    utimesSync(at('dist/.build-stamp'), built, built);
  }

  before(() => {
    root = mkdtempSync(path.join(tmpdir(), 'tessera-build-'));
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  test('nothing changed since the last build: not stale', () => {
    freshTree();
    assert.equal(stale(at('dist/.build-stamp'), at('src'), at('tsconfig.json')), false);
  });

  test('no build yet (no stamp): stale', () => {
    freshTree();
    rmSync(at('dist/.build-stamp'));
    assert.equal(stale(at('dist/.build-stamp'), at('src')), true);
  });

  test('a source file or a migration changed after the build: stale', () => {
    freshTree();
    utimesSync(at('src/app.ts'), later, later);
    assert.equal(stale(at('dist/.build-stamp'), at('src')), true);
    freshTree();
    utimesSync(at('src/migrations/0001_init.sql'), later, later);
    assert.equal(stale(at('dist/.build-stamp'), at('src')), true);
  });

  test('a file added or removed under src/ after the build: stale', () => {
    freshTree();
    writeFileSync(at('src/migrations/0002_more.sql'), 'select 2;\n');
    assert.equal(stale(at('dist/.build-stamp'), at('src')), true);
    freshTree();
    rmSync(at('src/app.ts'));
    assert.equal(stale(at('dist/.build-stamp'), at('src')), true);
  });
});
