/**
 * Where a profiled service spent its CPU during one benchmark phase:
 *
 *   npm run bench -- --only pglite --phases mit --cpu-prof /tmp/prof
 *   node --import tsx bench/profile-summary.ts /tmp/prof/phases-pglite.json mit#1 [top] [profile]
 *
 * Reads the V8 CPU profile the service wrote on exit and the phase windows the benchmark wrote
 * beside it (both on the monotonic clock), keeps the samples inside the window, and prints the
 * self time by package or file and the functions with the most self time. `profile` reads another
 * profile of the same run instead: PGlite's database thread writes its own (`CPU.*.cpuprofile`),
 * for which PostgreSQL's functions are also listed by inclusive time, named from PGlite's exports
 * (wasm-names.ts).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pgliteWasmNames } from './wasm-names.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const fastifyPackages = [
  'fastify',
  '@fastify/',
  'find-my-way',
  'avvio',
  'fast-json-stringify',
  'fast-querystring',
  'secure-json-parse',
  'fast-uri',
  'light-my-request',
  'toad-cache',
  'rfdc',
  'abstract-logging',
  'process-warning',
];

function categoryOf(frame: ProfileNode['callFrame']): string {
  const { url, functionName } = frame;
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('wasm://')) return 'pglite: postgres (wasm)';
  if (url.startsWith('node:')) return 'node core';
  const modules = url.lastIndexOf('/node_modules/');
  if (modules !== -1) {
    const rest = url.slice(modules + '/node_modules/'.length);
    const name = rest.startsWith('@') ? rest.split('/').slice(0, 2).join('/') : rest.split('/')[0]!;
    if (name === '@electric-sql/pglite') return 'pglite: js';
    if (name.startsWith('pg')) return `pg driver (${name})`;
    if (fastifyPackages.some((prefix) => name === prefix || name.startsWith(prefix))) return 'fastify';
    return name;
  }
  const dist = url.indexOf('/dist/');
  if (dist !== -1) return `tessera: ${url.slice(dist + '/dist/'.length)}`;
  return url;
}

/**
 * Names a frame of PGlite's PostgreSQL module: the profile's WebAssembly script with the most
 * functions (extensions such as PL/pgSQL are modules of their own, with indexes of their own).
 */
async function postgresFunctions(profile: Profile): Promise<(frame: ProfileNode['callFrame']) => string | undefined> {
  const counts = new Map<string, number>();
  for (const { callFrame } of profile.nodes) {
    if (callFrame.url.startsWith('wasm://')) counts.set(callFrame.url, (counts.get(callFrame.url) ?? 0) + 1);
  }
  const main = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
  if (!main) return () => undefined;
  const names = await pgliteWasmNames();
  return (frame) => {
    if (frame.url !== main) return undefined;
    const index = /^wasm-function\[(\d+)\]$/.exec(frame.functionName)?.[1];
    return index === undefined ? undefined : names.get(Number(index));
  };
}

async function main(): Promise<void> {
  const [phasesFile, windowName, topArg, profileArg] = process.argv.slice(2);
  if (!phasesFile) {
    process.stderr.write('usage: profile-summary.ts <phases-BACKEND.json> [window] [top] [profile]\n');
    process.exit(1);
  }
  const phases = JSON.parse(await readFile(phasesFile, 'utf8')) as {
    profile: string;
    windows: Array<{ name: string; startUs: string; endUs: string }>;
  };
  const profileFile = profileArg ?? path.join(path.dirname(phasesFile), phases.profile);
  const profile = JSON.parse(await readFile(profileFile, 'utf8')) as Profile;
  const window = windowName ? phases.windows.find((candidate) => candidate.name === windowName) : undefined;
  if (windowName && !window) {
    throw new Error(`no window ${windowName}; known: ${phases.windows.map((known) => known.name).join(', ')}`);
  }
  const fromUs = window ? Number(window.startUs) : -Infinity;
  const toUs = window ? Number(window.endUs) : Infinity;
  const top = Number(topArg ?? 30);

  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parents = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  const postgres = await postgresFunctions(profile);
  const inclusiveByPostgresFunction = new Map<string, number>();
  const selfByFunction = new Map<string, number>();
  const selfByCategory = new Map<string, number>();
  let totalUs = 0;
  let at = profile.startTime;
  for (let index = 0; index < profile.samples.length; index += 1) {
    at += profile.timeDeltas[index] ?? 0;
    if (at < fromUs || at > toUs) continue;
    // The time until the next sample belongs to this one.
    const spentUs = profile.timeDeltas[index + 1] ?? 0;
    const node = nodes.get(profile.samples[index]!)!;
    const frame = node.callFrame;
    const category = categoryOf(frame);
    const where = frame.url ? `${frame.url.replace(/^.*\/(node_modules|dist)\//, '$1/')}:${frame.lineNumber + 1}` : '';
    const key = `${frame.functionName || '(anonymous)'}  ${where}`;
    selfByFunction.set(key, (selfByFunction.get(key) ?? 0) + spentUs);
    selfByCategory.set(category, (selfByCategory.get(category) ?? 0) + spentUs);
    totalUs += spentUs;
    // Each named PostgreSQL function on the sample's stack, once.
    const onStack = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parents.get(id)) {
      const named = postgres(nodes.get(id)!.callFrame);
      if (named) onStack.add(named);
    }
    for (const named of onStack)
      inclusiveByPostgresFunction.set(named, (inclusiveByPostgresFunction.get(named) ?? 0) + spentUs);
  }
  if (totalUs === 0) throw new Error('no samples in that window');

  const busyUs = totalUs - (selfByCategory.get('(idle)') ?? 0);
  const rows = (map: Map<string, number>, limit: number) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, limit)
      .map(
        ([name, us]) =>
          `${(us / 1000).toFixed(0).padStart(8)} ms  ${((us / totalUs) * 100).toFixed(1).padStart(5)} %  ${((us / busyUs) * 100).toFixed(1).padStart(5)} %  ${name}`,
      );
  const header = `${'self'.padStart(11)}  ${'of all'.padStart(7)}  ${'of busy'.padStart(7)}`;
  process.stdout.write(
    [
      `${phases.profile}${window ? `, window ${window.name}` : ''}: ${(totalUs / 1e6).toFixed(2)} s sampled, ` +
        `${((busyUs / totalUs) * 100).toFixed(1)} % busy`,
      '',
      'by package or file:',
      header,
      ...rows(selfByCategory, 40),
      '',
      `top ${top} functions by self time:`,
      header,
      ...rows(selfByFunction, top),
      '',
      ...(inclusiveByPostgresFunction.size === 0
        ? []
        : [
            `top ${top} PostgreSQL functions by inclusive time (exported ones only):`,
            `${'inclusive'.padStart(11)}  ${'of all'.padStart(7)}  ${'of busy'.padStart(7)}`,
            ...rows(inclusiveByPostgresFunction, top),
            '',
          ]),
    ].join('\n'),
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exitCode = 1;
});
