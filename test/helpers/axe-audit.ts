/**
 * axe-core (Deque's accessibility rules) run inside a page or frame by the browser tests: the
 * script is evaluated through the DevTools protocol, which a page's Content-Security-Policy does
 * not govern, so the pages are audited exactly as shoppers get them.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Frame, Page } from 'playwright-core';

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

/** The serious and critical violations of the page as it is now, one line each (empty: none). */
export async function seriousViolations(target: Page | Frame): Promise<string[]> {
  await target.evaluate(axeSource);
  const violations = await target.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (context: Document, options: object) => Promise<unknown> } }).axe;
    const result = (await axe.run(document, { resultTypes: ['violations'] })) as { violations: unknown[] };
    return result.violations;
  });
  return (violations as AxeViolation[])
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map(
      (violation) =>
        `${violation.id} (${violation.impact}): ${violation.help} at ${violation.nodes
          .map((node) => node.target.join(' '))
          .join(', ')}`,
    );
}
