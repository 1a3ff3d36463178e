/**
 * Where a profiled service spent its CPU during one benchmark phase:
 *
 *   npm run bench -- --only pglite --phases mit --cpu-prof /tmp/prof
 *   node --import tsx bench/profile-summary.ts /tmp/prof/phases-pglite.json mit#1 [top]
 *
 * Reads the V8 CPU profile the service wrote on exit and the phase windows the benchmark wrote
 * beside it (both on the monotonic clock), keeps the samples inside the window, and prints the
 * self time by package or file and the functions with the most self time.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';

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

async function main(): Promise<void> {
  const [phasesFile, windowName, topArg] = process.argv.slice(2);
  if (!phasesFile) {
    process.stderr.write('usage: profile-summary.ts <phases-BACKEND.json> [window] [top]\n');
    process.exit(1);
  }
  const phases = JSON.parse(await readFile(phasesFile, 'utf8')) as {
    profile: string;
    windows: Array<{ name: string; startUs: string; endUs: string }>;
  };
  const profile = JSON.parse(await readFile(path.join(path.dirname(phasesFile), phases.profile), 'utf8')) as Profile;
  const window = windowName ? phases.windows.find((candidate) => candidate.name === windowName) : undefined;
  if (windowName && !window) {
    throw new Error(`no window ${windowName}; known: ${phases.windows.map((known) => known.name).join(', ')}`);
  }
  const fromUs = window ? Number(window.startUs) : -Infinity;
  const toUs = window ? Number(window.endUs) : Infinity;
  const top = Number(topArg ?? 30);

  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
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
    ].join('\n'),
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exitCode = 1;
});
