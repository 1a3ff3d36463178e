/**
 * Requests replayed as the provider's published clients send them (test/existing-clients*.test.ts):
 * the bytes as given, and the objects those tests start from. `context` answers the test's Tessera.
 */
import assert from 'node:assert/strict';
import { apiBase, injectRaw, type ApiResponse, type TestContext, type TestMerchant } from './harness.js';

export const visa = '4242424242424242';
export const threeDSecureCard = '4000002500003155';
/** What the Java SDK's form requests carry (HttpContent.buildFormURLEncodedContent). */
export const javaForm = 'application/x-www-form-urlencoded;charset=UTF-8';
export const json = 'application/json';

export function clientReplay(context: () => TestContext) {
  /** Sends the bytes as given, with the merchant's private key unless `headers` says otherwise. */
  async function send(
    merchant: TestMerchant,
    method: 'GET' | 'POST' | 'DELETE' | 'OPTIONS',
    path: string,
    options: { type?: string; body?: string; headers?: Record<string, string> } = {},
  ): Promise<ApiResponse> {
    const response = await injectRaw(context(), {
      method,
      url: `${apiBase}${path}`,
      headers: {
        authorization: `Bearer ${merchant.privateKey}`,
        ...(options.type ? { 'content-type': options.type } : {}),
        ...options.headers,
      },
      payload: options.body,
    });
    let body: ApiResponse['body'];
    try {
      body = JSON.parse(response.body);
    } catch {
      body = { code: '', msg: '', data: null };
    }
    return { status: response.statusCode, headers: response.headers, body, raw: response.body };
  }

  function ok(response: ApiResponse) {
    assert.equal(response.status, 200, response.raw);
    assert.equal(response.body.code, 'success');
    return response.body.data;
  }

  function refused(response: ApiResponse, param: string) {
    assert.equal(response.status, 400, response.raw);
    assert.equal(response.body.code, 'invalid_request', response.raw);
    assert.equal(response.body.data.param, param, response.raw);
  }

  async function customer(merchant: TestMerchant): Promise<string> {
    return ok(await merchant.call('POST', '/customers/create', { email: 'ada@example.com' })).id;
  }

  async function method(merchant: TestMerchant, cardNo = visa): Promise<string> {
    const card = { cardNo, expMonth: '12', expYear: '2030', securityCode: '123' };
    return ok(await merchant.call('POST', '/payment_methods/create', { type: 'card', card })).id;
  }

  async function payment(merchant: TestMerchant, fields: Record<string, unknown> = {}) {
    const body = { amount: '1999', currency: 'USD', paymentMethod: await method(merchant), ...fields };
    return ok(await merchant.call('POST', '/payment/create', body));
  }

  async function challengeReturn(returnUrl: string): Promise<{ location: string; paid: Record<string, any> }> {
    const merchant = await context().merchant();
    const paid = await payment(merchant, {
      paymentMethod: await method(merchant, threeDSecureCard),
      confirm: 'true',
      returnUrl,
    });
    assert.equal(paid.status, 'requires_action');
    const answered = await injectRaw(context(), {
      method: 'POST',
      url: `/3ds/${paid.id}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ secret: paid.clientSecret, outcome: 'pass' }).toString(),
    });
    assert.equal(answered.statusCode, 303, answered.body);
    return { location: String(answered.headers.location), paid };
  }

  async function preAuthorized(merchant: TestMerchant) {
    const authorized = await payment(merchant, { preAuth: 'y', confirm: 'true' });
    assert.equal(authorized.status, 'requires_capture');
    return authorized;
  }

  return { send, ok, refused, customer, method, payment, challengeReturn, preAuthorized };
}
