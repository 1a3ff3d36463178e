/**
 * axe-core (Deque's accessibility rules) run inside a page or frame by the browser tests: the
 * script is evaluated through the DevTools protocol, which a page's Content-Security-Policy does
 * not govern, so the pages are audited exactly as shoppers get them.
 *
 * axe.run waits on timers, and a page opened without JavaScript (`javaScriptEnabled: false`) runs
 * no timer, not even for the DevTools protocol: the audit's promise never settles and Playwright's
 * evaluate has no timeout of its own, which is how a test of the page without script once hung CI.
 * Such a page's document is audited in a page of its own where script runs but no script of the
 * document is loaded (`withoutScript`), and every audit is bounded.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Disposable, Frame, Page } from 'playwright-core';

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

export interface AuditOptions {
  /** The page was opened with `javaScriptEnabled: false`: its document is audited in a copy. */
  withoutScript?: boolean;
  /** How long the audit may take before the test fails (default 30 s). */
  timeoutMs?: number;
}

async function runAxe(target: Page | Frame): Promise<AxeViolation[]> {
  // A document audited before (the same page at another width) still has axe-core.
  const loaded = await target.evaluate(() => typeof (window as { axe?: { run?: unknown } }).axe?.run === 'function');
  if (!loaded) await target.evaluate(axeSource);
  const violations = await target.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (context: Document, options: object) => Promise<unknown> } }).axe;
    const result = (await axe.run(document, { resultTypes: ['violations'] })) as { violations: unknown[] };
    return result.violations;
  });
  return violations as AxeViolation[];
}

/**
 * The audit of a page opened without script: its document as it is now, loaded at the same
 * address and size into a page where script runs, every other request (the card scripts above
 * all) refused, so that the audit sees the same markup and style that the shopper without
 * script sees, and nothing of it is changed by a script.
 */
async function runAxeWithoutScript(page: Page): Promise<AxeViolation[]> {
  const browser = page.context().browser();
  if (!browser) throw new Error('withoutScript needs a page of a launched browser');
  const html = await page.content();
  const address = page.url();
  const copy = await browser.newPage({ viewport: page.viewportSize() });
  try {
    copy.setDefaultTimeout(15_000);
    await copy.route('**/*', (route) =>
      route.request().url() === address && route.request().resourceType() === 'document'
        ? route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: html })
        : route.abort(),
    );
    await copy.goto(address);
    return await runAxe(copy);
  } finally {
    await copy.context().close();
  }
}

/**
 * For a test that audits many documents in turn: axe-core is put into each new document of the
 * page as the document is created, which costs about a third of evaluating it into the document
 * afterwards, as an audit does when it finds none. Dispose of the result to stop.
 */
export function axeInEveryDocument(page: Page): Promise<Disposable> {
  return page.addInitScript({ content: axeSource });
}

/** The serious and critical violations of the page as it is now, one line each (empty: none). */
export async function seriousViolations(target: Page | Frame, options: AuditOptions = {}): Promise<string[]> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new Error(`axe-core did not finish within ${timeoutMs} ms on ${target.url()}`)),
      timeoutMs,
    );
  });
  if (options.withoutScript && !('context' in target)) throw new Error('withoutScript audits a page, not a frame');
  const audit = options.withoutScript ? runAxeWithoutScript(target as Page) : runAxe(target);
  // Past the deadline the audit is abandoned; its late failure (the page closed) is nobody's business.
  audit.catch(() => undefined);
  let violations: AxeViolation[];
  try {
    violations = await Promise.race([audit, timeout]);
  } finally {
    clearTimeout(timer);
  }
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map(
      (violation) =>
        `${violation.id} (${violation.impact}): ${violation.help} at ${violation.nodes
          .map((node) => node.target.join(' '))
          .join(', ')}`,
    );
}
