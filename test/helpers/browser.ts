/**
 * What the browser tests share: Debian's chromium driven by playwright-core (Playwright's own
 * download is not reachable here), the token that signs a payment's notifyUrl notifications, and
 * the check that the pictures the docs show are taken by the tests.
 */
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import type { TestMerchant } from './harness.js';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox'],
  });
}

/** The merchant's dynamic endpoint's token: it signs every notification to a payment's notifyUrl. */
export async function dynamicEndpointToken(merchant: TestMerchant): Promise<string> {
  const endpoints = await merchant.call('GET', '/webhook_endpoints?limit=100');
  const dynamic = (endpoints.body.data.data as Array<{ id: string; kind: string }>).find(
    (endpoint) => endpoint.kind === 'dynamic',
  );
  assert.ok(dynamic, endpoints.raw);
  const revealed = await merchant.call('POST', `/webhook_endpoints/${dynamic.id}/reveal_token`, {});
  assert.equal(revealed.status, 200, revealed.raw);
  return revealed.body.data.token;
}

/**
 * The pictures a document names (`](images/NAME.png)`) that `takes` claims and that were not
 * written since `sinceMs`: empty when the run that started then took every one of them, so a
 * picture the docs show is always one a test takes.
 */
export function picturesNotTaken(document: string, sinceMs: number, takes: (name: string) => boolean): string[] {
  const names = [...readFileSync(document, 'utf8').matchAll(/\]\(images\/([\w-]+\.png)\)/g)].map((match) => match[1]!);
  assert.ok(names.length > 0, `${document} names no picture`);
  return names.filter(
    (name) => takes(name) && (statSync(`docs/images/${name}`, { throwIfNoEntry: false })?.mtimeMs ?? 0) < sinceMs,
  );
}
