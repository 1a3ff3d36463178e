/**
 * axe-core in a real page (issue 22): the library's source is evaluated through the DevTools
 * protocol, which the page's Content-Security-Policy does not govern, so the dashboard's CSP
 * stays as it ships. Only serious and critical violations fail a test.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown[] }>;
}

/** The serious and critical axe-core violations of the page as it is now, one line each. */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(context: unknown, options: unknown): Promise<unknown> } }).axe;
    const result = (await axe.run(document, { resultTypes: ['violations'] })) as { violations: AxeViolation[] };
    return result.violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact,
      help: violation.help,
      nodes: violation.nodes.map((node) => JSON.stringify(node.target)),
    }));
  });
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.id} (${violation.impact}): ${violation.help} — ${violation.nodes.join(', ')}`);
}

/** Whether anything makes the page scroll sideways (issue 22: nothing at 390 px). */
export function scrollsSideways(page: Page): Promise<boolean> {
  return page.evaluate(() => document.scrollingElement!.scrollWidth > window.innerWidth);
}
