/**
 * The benchmarks' caller of Tessera's API, and the payment body both benchmarks send.
 *
 * The caller (setup: merchants, customers, payment methods, endpoints): a POST with `body`, a GET
 * without; anything but an HTTP 200 `success` envelope throws.
 */
export async function call(url: string, key: string, body?: unknown): Promise<any> {
  const response = await fetch(url, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  let parsed: any;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (response.status !== 200 || parsed?.code !== 'success') {
    const method = body === undefined ? 'GET' : 'POST';
    throw new Error(`${method} ${new URL(url).pathname} answered HTTP ${response.status}: ${text.slice(0, 300)}`);
  }
  return parsed.data;
}

/** A confirmed payment on a customer/method pair: the storing one, or MIT once it is stored. */
export function paymentBody(
  pair: { customerId: string; paymentMethodId: string },
  subsequentInitialType?: 'mit',
): string {
  return JSON.stringify({
    amount: '1000',
    currency: 'USD',
    customerId: pair.customerId,
    paymentMethod: pair.paymentMethodId,
    confirm: 'true',
    setupFutureUsage: 'on',
    ...(subsequentInitialType === undefined ? {} : { subsequentInitialType }),
  });
}
