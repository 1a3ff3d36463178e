// What the build steps share: whether a step has to run again (its output is older than something
// it reads), and the TypeScript files of a folder. Used by scripts/build.mjs (the service),
// scripts/sdk-build.mjs (the SDK) and scripts/test-build.mjs (the tests).
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * The newest modification time under these files and folders (0 when none exists). A folder's
 * own time counts too: deleting or renaming a file changes only its folder's.
 */
export function newest(...entries) {
  let latest = 0;
  for (const entry of entries) {
    let stat;
    try {
      stat = statSync(entry);
    } catch {
      continue;
    }
    latest = Math.max(latest, stat.mtimeMs);
    if (stat.isDirectory()) {
      for (const child of readdirSync(entry)) latest = Math.max(latest, newest(path.join(entry, child)));
    }
  }
  return latest;
}

/** True when the output is missing or any input changed after it was written. */
export function stale(output, ...inputs) {
  const built = newest(output);
  return built === 0 || newest(...inputs) > built;
}

/** The `.ts` files below `dir` (declaration files left out), as paths from the working folder. */
export function typescriptFiles(dir) {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...typescriptFiles(file));
    else if (file.endsWith('.ts') && !file.endsWith('.d.ts')) found.push(file);
  }
  return found;
}
