/**
 * The dashboard's browser checks: axe-core's serious and critical violations (one bounded audit
 * for every browser test, test/helpers/axe-audit.ts) and sideways scrolling.
 */
import type { Page } from 'playwright-core';

export { axeInEveryDocument, seriousViolations } from './axe-audit.js';

/** Whether anything makes the page scroll sideways (issue 22: nothing at 390 px). */
export function scrollsSideways(page: Page): Promise<boolean> {
  return page.evaluate(() => document.scrollingElement!.scrollWidth > window.innerWidth);
}
