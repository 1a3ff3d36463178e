/** Settings shared by the benchmarks: whole-number environment values, and --only / --runs. */

export type Backend = 'pglite' | 'postgres';

/** A whole number from the environment, at least `min`; `fallback` when unset or blank. */
export function positiveInteger(name: string, fallback: number, min = 1): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < min) throw new Error(`${name} must be a whole number ≥ ${min}`);
  return Number(raw);
}

/** `--only pglite|postgres` (both by default) and `--runs N` (BENCH_RUNS, 1 by default; 1 to 20). */
export function backendsAndRuns(values: { only?: string; runs?: string }): { backends: Backend[]; runs: number } {
  if (values.only !== undefined && values.only !== 'pglite' && values.only !== 'postgres') {
    throw new Error('--only takes pglite or postgres');
  }
  const runs = values.runs === undefined ? positiveInteger('BENCH_RUNS', 1) : Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1 || runs > 20) throw new Error('--runs takes a whole number from 1 to 20');
  return { backends: values.only ? [values.only] : ['pglite', 'postgres'], runs };
}
