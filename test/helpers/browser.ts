/**
 * What the browser tests share: Debian's chromium driven by playwright-core (Playwright's own
 * download is not reachable here), and the token that signs a payment's notifyUrl notifications.
 */
import assert from 'node:assert/strict';
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
