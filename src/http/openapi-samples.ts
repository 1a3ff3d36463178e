/**
 * `x-codeSamples` of every merchant operation (docs/api.md#the-api-reference): curl, and the `@tessera/node` SDK's
 * named method for it (sdk/src/resources.ts), built from the operation's example request, so that
 * a sample always sends what the example shows. test/api-reference-examples.test.ts runs every
 * operation's SDK sample against the built SDK and fails when one falls back to the generic
 * `tessera.request(…)`, names a method the SDK lacks, or sends another request than its operation.
 */
import { apiBasePath } from './app-types.js';

/**
 * `METHOD path` → the SDK's method (`resource.method`); the call's arguments follow from its kind.
 * Two operations are second forms of another, and their sample calls the SDK's method for that
 * one: POST /payment/{id} (the Java SDK's update) sends POST /payment/{id}/update, and POST
 * …/reveal_token (kept for clients that post it) sends the GET.
 */
export const sdkMethods: Record<string, string> = {
  'POST /customers/create': 'customers.create',
  'GET /customers/{id}': 'customers.retrieve',
  'GET /customers': 'customers.list',
  'POST /customers/{id}/update': 'customers.update',
  'DELETE /customers/{id}': 'customers.del',
  'POST /payment_methods/create': 'paymentMethods.create',
  'GET /payment_methods/{id}': 'paymentMethods.retrieve',
  'GET /payment_methods/list/{customerId}': 'paymentMethods.list',
  'POST /payment_methods/{id}/attach': 'paymentMethods.attach',
  'POST /payment_methods/{id}/detach': 'paymentMethods.detach',
  'POST /payment_methods/{id}/update': 'paymentMethods.update',
  'POST /payment/create': 'payments.create',
  'GET /payment/{id}': 'payments.retrieve',
  'GET /payment': 'payments.list',
  'POST /payment/{id}/update': 'payments.update',
  'POST /payment/{id}': 'payments.update',
  'POST /payment/{id}/confirm': 'payments.confirm',
  'POST /payment/{id}/capture': 'payments.capture',
  'POST /payment/{id}/cancel': 'payments.cancel',
  'POST /refunds/create': 'refunds.create',
  'GET /refunds/{id}': 'refunds.retrieve',
  'GET /refunds': 'refunds.list',
  'GET /balance': 'balance.retrieve',
  'GET /balance/summary': 'balance.summary',
  'GET /balance_transactions/{id}': 'balanceTransactions.retrieve',
  'GET /balance_transactions': 'balanceTransactions.list',
  'GET /disputes/{id}': 'disputes.retrieve',
  'GET /disputes': 'disputes.list',
  'POST /disputes/{id}/update': 'disputes.update',
  'POST /disputes/{id}/accept': 'disputes.accept',
  'POST /payouts/create': 'payouts.create',
  'POST /payouts/{id}/cancel': 'payouts.cancel',
  'GET /payouts/{id}': 'payouts.retrieve',
  'GET /payouts': 'payouts.list',
  'GET /payouts/{id}/reconciliation': 'payouts.reconciliation',
  'POST /invoices/create': 'invoices.create',
  'GET /invoices/{id}': 'invoices.retrieve',
  'GET /invoices': 'invoices.list',
  'POST /invoices/{id}/update': 'invoices.update',
  'POST /invoices/{id}/finalize': 'invoices.finalize',
  'POST /invoices/{id}/send': 'invoices.send',
  'POST /invoices/{id}/pay': 'invoices.pay',
  'POST /invoices/{id}/void': 'invoices.void',
  'POST /invoices/{id}/mark_uncollectible': 'invoices.markUncollectible',
  'DELETE /invoices/{id}': 'invoices.del',
  'POST /checkout/session/create': 'checkoutSessions.create',
  'GET /checkout/session/{id}': 'checkoutSessions.retrieve',
  'GET /checkout/session': 'checkoutSessions.list',
  'POST /checkout/session/{id}/expire': 'checkoutSessions.expire',
  'GET /events/{id}': 'events.retrieve',
  'GET /events': 'events.list',
  'GET /events/{id}/deliveries': 'events.deliveries',
  'GET /events/{id}/attempts': 'events.attempts',
  'POST /events/{id}/resend': 'events.resend',
  'GET /events/stream': 'events.stream',
  'POST /webhook_endpoints/create': 'webhookEndpoints.create',
  'GET /webhook_endpoints/{id}': 'webhookEndpoints.retrieve',
  'GET /webhook_endpoints': 'webhookEndpoints.list',
  'POST /webhook_endpoints/{id}/update': 'webhookEndpoints.update',
  'DELETE /webhook_endpoints/{id}': 'webhookEndpoints.del',
  'GET /webhook_endpoints/{id}/reveal_token': 'webhookEndpoints.revealToken',
  'POST /webhook_endpoints/{id}/reveal_token': 'webhookEndpoints.revealToken',
  'POST /webhook_endpoints/{id}/roll_token': 'webhookEndpoints.rollToken',
  'POST /webhook_endpoints/{id}/check': 'webhookEndpoints.check',
  'GET /webhook_endpoints/{id}/checks': 'webhookEndpoints.checks',
  'POST /webhook_endpoints/{id}/recover': 'webhookEndpoints.recover',
  'GET /webhook_endpoints/sending_addresses': 'webhookEndpoints.sendingAddresses',
  'GET /webhook_deliveries': 'webhookDeliveries.list',
  'GET /webhook_deliveries/{id}': 'webhookDeliveries.retrieve',
  'GET /webhook_deliveries/{id}/attempts': 'webhookDeliveries.attempts',
  'POST /webhook_deliveries/{id}/resend': 'webhookDeliveries.resend',
  'POST /webhook_deliveries/{id}/fast_forward': 'webhookDeliveries.fastForward',
  'POST /webhooks/doctor': 'webhooks.doctor',
};

/** An example request of an operation: the path with its parameters filled in, and what it sends. */
export interface ExampleRequest {
  /** Without the /api/services/v1 prefix, ids filled in: `/payment/pt_…/capture`. */
  path: string;
  query?: Record<string, string>;
  body?: unknown;
}

export interface CodeSample {
  lang: string;
  label: string;
  source: string;
}

const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

function queryString(query: Record<string, string> | undefined): string {
  const text = new URLSearchParams(query ?? {}).toString();
  return text ? `?${text}` : '';
}

function curlSample(method: string, example: ExampleRequest): string {
  const url = `"$TESSERA_URL${apiBasePath}${example.path}${queryString(example.query)}"`;
  const lines = [
    `curl${method === 'GET' ? '' : ` -X ${method}`} ${url}`,
    '  -H "Authorization: Bearer $TESSERA_API_KEY"',
  ];
  if (method === 'POST' && example.body !== undefined) {
    lines.push("  -H 'Content-Type: application/json'", `  -d ${shellQuote(JSON.stringify(example.body))}`);
  }
  return lines.join(' \\\n');
}

/** The SDK call: create(body), action(id, body), retrieve(id, query), list(query) or del(id). */
function nodeSample(key: string, method: string, example: ExampleRequest): string {
  const named = sdkMethods[key];
  const template = key.slice(key.indexOf(' ') + 1);
  const id = /\{\w+\}/.test(template) ? pathId(template, example.path) : undefined;
  const json = (value: unknown) => JSON.stringify(value, null, 2);
  const args: string[] = [];
  if (id !== undefined) args.push(`'${id}'`);
  if (method === 'POST' && example.body !== undefined && Object.keys(example.body as object).length > 0) {
    args.push(json(example.body));
  } else if (method === 'GET' && example.query && Object.keys(example.query).length > 0) {
    args.push(json(example.query));
  }
  const call = named
    ? `tessera.${named}(${args.join(', ')})`
    : `tessera.request('${method.toLowerCase()}', '${template}', ${json({
        ...(id === undefined ? {} : { params: { id } }),
        ...(example.query ? { query: example.query } : {}),
        ...(method === 'POST' && example.body !== undefined ? { body: example.body } : {}),
      })})`;
  const head = [
    "import { Tessera } from '@tessera/node';",
    '',
    'const tessera = new Tessera({ apiKey: process.env.TESSERA_API_KEY, baseUrl: process.env.TESSERA_URL });',
  ];
  if (named === 'events.stream') {
    // The stream never ends: its events are read as they come, until the signal aborts.
    const options = '{ signal: stop.signal }';
    return [
      ...head,
      'const stop = new AbortController(); // stop.abort() ends the loop',
      `for await (const event of tessera.${named}(${[...args, options].join(', ')})) {`,
      '  console.log(event.type, event.data.id);',
      '}',
    ].join('\n');
  }
  return [...head, `const answer = await ${call};`].join('\n');
}

/** The value of the one path parameter, read from the filled-in path. */
function pathId(template: string, path: string): string | undefined {
  const pattern = new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{\w+\\?\}/g, '([^/]+)')}$`);
  return pattern.exec(path)?.[1];
}

/** curl and Node.js samples of one operation (`key` = `METHOD path`, path without the prefix). */
export function codeSamples(key: string, example: ExampleRequest): CodeSample[] {
  const method = key.slice(0, key.indexOf(' '));
  return [
    { lang: 'Shell', label: 'curl', source: curlSample(method, example) },
    { lang: 'JavaScript', label: '@tessera/node', source: nodeSample(key, method, example) },
  ];
}
