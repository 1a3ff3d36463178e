/**
 * The dashboard's browser checks: axe-core's serious and critical violations (one bounded audit
 * for every browser test, test/helpers/axe-audit.ts) and sideways scrolling.
 */
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { seriousViolations } from './axe-audit.js';

export { axeInEveryDocument, seriousViolations } from './axe-audit.js';

/** Whether anything makes the page scroll sideways (issue 22: nothing at 390 px). */
export function scrollsSideways(page: Page): Promise<boolean> {
  return page.evaluate(() => document.scrollingElement!.scrollWidth > window.innerWidth);
}

/**
 * The page at 1280 px and at a phone's 390 px (docs/dashboard.md#layout-phones-and-accessibility):
 * no serious or critical axe-core violation and no sideways scroll at either; left at 1280 px.
 */
export async function fitsDeskAndPhone(page: Page): Promise<void> {
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
    assert.deepEqual(await seriousViolations(page), [], `at ${width}`);
    assert.equal(await scrollsSideways(page), false, `at ${width}`);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}
