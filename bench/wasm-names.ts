/**
 * Names for the WebAssembly functions of PGlite's PostgreSQL in a V8 CPU profile, which shows them
 * as `wasm-function[N]`: the module has no name section, but it exports PostgreSQL's functions for
 * its extensions, and an export names its function by the same index (imported functions first).
 * Functions that are not exported stay unnamed.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';

export async function pgliteWasmNames(): Promise<Map<number, string>> {
  const require = createRequire(import.meta.url);
  // The package's main entry is dist/index.cjs for require, beside pglite.wasm.
  const bytes = await readFile(path.join(path.dirname(require.resolve('@electric-sql/pglite')), 'pglite.wasm'));
  return exportedFunctionNames(bytes);
}

/** Function index → export name, from a module's import section (2) and export section (7). */
export function exportedFunctionNames(bytes: Uint8Array): Map<number, string> {
  const names = new Map<number, string>();
  let at = 8; // magic and version
  const u32 = () => {
    let result = 0;
    let shift = 0;
    let byte: number;
    do {
      byte = bytes[at++]!;
      result += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    return result;
  };
  const name = () => {
    const length = u32();
    const text = Buffer.from(bytes.buffer, bytes.byteOffset + at, length).toString('utf8');
    at += length;
    return text;
  };
  const limits = () => {
    const flags = u32();
    u32();
    if (flags & 1) u32();
  };
  let importedFunctions = 0;
  while (at < bytes.length) {
    const section = bytes[at++]!;
    const size = u32();
    const end = at + size;
    if (section === 2) {
      for (let count = u32(); count > 0; count -= 1) {
        name();
        name();
        const kind = bytes[at++]!;
        if (kind === 0) {
          u32(); // type index
          importedFunctions += 1;
        } else if (kind === 1) {
          at += 1; // element type
          limits();
        } else if (kind === 2) limits();
        else if (kind === 3)
          at += 2; // value type, mutability
        else if (kind === 4) {
          at += 1;
          u32();
        }
      }
    } else if (section === 7) {
      for (let count = u32(); count > 0; count -= 1) {
        const exported = name();
        const kind = bytes[at++]!;
        const index = u32();
        if (kind === 0 && index >= importedFunctions) names.set(index, exported);
      }
    }
    at = end;
  }
  return names;
}
