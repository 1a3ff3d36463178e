// Whether a build step has to run again: the step's output is older than something it reads.
// Shared by scripts/build.mjs (the service) and scripts/sdk-build.mjs (the SDK).
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
