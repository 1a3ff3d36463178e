/**
 * The dashboard's browser checks: axe-core's serious and critical violations (one bounded audit
 * for every browser test, test/helpers/axe-audit.ts) and sideways scrolling.
 */
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { seriousViolations, type AuditOptions } from './axe-audit.js';

export { axeInEveryDocument, seriousViolations } from './axe-audit.js';

/** Whether anything makes the page scroll sideways (issue 22: nothing at 390 px). */
export function scrollsSideways(page: Page): Promise<boolean> {
  return page.evaluate(() => document.scrollingElement!.scrollWidth > window.innerWidth);
}

/** What `auditAtDeskAndPhone` found, each entry naming the page (when named) and the width. */
export interface WidthFindings {
  accessibility: string[];
  sideways: string[];
}

/**
 * The page as it is now at 1280 px and then at a phone's 390 px
 * (docs/dashboard.md#layout-phones-and-accessibility): each serious or critical axe-core
 * violation and each sideways scroll is added to `found`, named, so that one test can report many
 * pages at once. The page is left at 1280 px.
 */
export async function auditAtDeskAndPhone(
  page: Page,
  found: WidthFindings,
  name?: string,
  options: AuditOptions = {},
): Promise<WidthFindings> {
  const where = (width: number) => (name === undefined ? `at ${width}` : `${name} at ${width}`);
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
    for (const violation of await seriousViolations(page, options))
      found.accessibility.push(`${where(width)}: ${violation}`);
    if (await scrollsSideways(page)) found.sideways.push(where(width));
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  return found;
}

/** The page has no serious axe-core violation and no sideways scroll at 1280 px or at 390 px. */
export async function fitsDeskAndPhone(page: Page): Promise<void> {
  const found = await auditAtDeskAndPhone(page, { accessibility: [], sideways: [] });
  assert.deepEqual(found.accessibility, []);
  assert.deepEqual(found.sideways, []);
}
