/**
 * What the API reference (/docs) shows besides the route schemas (issue 12): a summary for every
 * operation, examples written by hand for every field a renderer would otherwise fill from its
 * regular expression (it turns `^https?://…` into text such as `https://fG$~7e…`), each merchant
 * operation's request, answer and error captured from a real run (reference-examples.json), and the
 * operator API in a document of its own.
 */
import { adminBasePath, apiBasePath } from './app-types.js';
import { codeSamples, type ExampleRequest } from './openapi-samples.js';
import { capturedExamples } from './reference-examples.js';

type Doc = { summary: string; description?: string };

/** `METHOD path` (merchant paths without the /api/services/v1 prefix) → summary, and a description where the route has none. */
const operations: Record<string, Doc> = {
  'POST /customers/create': {
    summary: 'Create a customer',
    description: 'Creates a customer; every field is optional.',
  },
  'GET /customers/{id}': { summary: 'Retrieve a customer', description: 'A customer by its id (cus_…).' },
  'DELETE /customers/{id}': {
    summary: 'Delete a customer',
    description: 'Deletes the customer and detaches its payment methods; its payments remain.',
  },
  'GET /customers': { summary: 'List customers' },
  'POST /customers/{id}/update': {
    summary: 'Update a customer',
    description: 'Changes the fields sent; the others keep their values.',
  },
  'POST /payment_methods/create': { summary: 'Create a card payment method' },
  'GET /payment_methods/{id}': { summary: 'Retrieve a payment method' },
  'GET /payment_methods/list/{customerId}': { summary: "List a customer's payment methods" },
  'POST /payment_methods/{id}/attach': {
    summary: 'Attach a payment method to a customer',
    description: 'Attaches the payment method to `customerId`; a method attached elsewhere is refused.',
  },
  'POST /payment_methods/{id}/detach': {
    summary: 'Detach a payment method',
    description: 'Detaches the payment method from its customer; it can no longer be charged as a stored card.',
  },
  'POST /payment_methods/{id}/update': { summary: 'Update a payment method' },
  'POST /payment/create': { summary: 'Create a payment' },
  'GET /payment/{id}': { summary: 'Retrieve a payment' },
  'POST /payment/{id}': { summary: 'Update a payment (Java SDK form)' },
  'GET /payment': { summary: 'List payments' },
  'POST /payment/{id}/update': { summary: 'Update a payment' },
  'POST /payment/{id}/confirm': { summary: 'Confirm a payment' },
  'POST /payment/{id}/capture': { summary: 'Capture a pre-authorized payment' },
  'POST /payment/{id}/cancel': { summary: 'Cancel a payment' },
  'POST /refunds/create': { summary: 'Create a refund' },
  'GET /refunds/{id}': { summary: 'Retrieve a refund' },
  'GET /refunds': { summary: 'List refunds' },
  'GET /balance': { summary: 'Retrieve the balance' },
  'GET /balance/summary': { summary: 'Summarize the balance change of a period' },
  'GET /balance_transactions/{id}': { summary: 'Retrieve a balance transaction' },
  'GET /balance_transactions': { summary: 'List balance transactions' },
  'POST /payouts/create': { summary: 'Create a payout' },
  'GET /disputes/{id}': { summary: 'Retrieve a dispute' },
  'GET /disputes': { summary: 'List disputes' },
  'POST /disputes/{id}/update': { summary: 'Stage or submit evidence for a dispute' },
  'POST /disputes/{id}/accept': { summary: 'Accept a dispute' },
  'POST /payouts/{id}/cancel': { summary: 'Cancel a pending payout' },
  'GET /payouts/{id}': { summary: 'Retrieve a payout' },
  'GET /payouts': { summary: 'List payouts' },
  'GET /payouts/{id}/reconciliation': { summary: 'Reconcile a payout: the entries it settles (JSON or CSV)' },
  'POST /invoices/create': { summary: 'Create an invoice' },
  'GET /invoices/{id}': { summary: 'Retrieve an invoice' },
  'DELETE /invoices/{id}': { summary: 'Delete a draft invoice' },
  'GET /invoices': { summary: 'List invoices' },
  'POST /invoices/{id}/update': { summary: 'Update an invoice' },
  'POST /invoices/{id}/finalize': { summary: 'Finalize an invoice' },
  'POST /invoices/{id}/send': { summary: 'E-mail an invoice' },
  'POST /invoices/{id}/void': { summary: 'Void an invoice' },
  'POST /invoices/{id}/mark_uncollectible': { summary: 'Mark an invoice uncollectible' },
  'POST /invoices/{id}/pay': { summary: 'Pay an invoice with the stored card' },
  'POST /checkout/session/create': { summary: 'Create a checkout session' },
  'GET /checkout/session/{id}': { summary: 'Retrieve a checkout session' },
  'GET /checkout/session': { summary: 'List checkout sessions' },
  'POST /checkout/session/{id}/expire': { summary: 'Expire a checkout session' },
  'GET /events/{id}': {
    summary: 'Retrieve an event',
    description:
      'An event by its id (evt_…): `{id, apiVersion, type, created, sequence, data}`, data as it was then; sequence grows with each event of the same object.',
  },
  'GET /events': {
    summary: 'List events',
    description: 'Newest first. Filters: `type` (an event code) and `objectId` (e.g. a payment id).',
  },
  'POST /webhook_endpoints/create': { summary: 'Create a webhook endpoint' },
  'GET /webhook_endpoints/{id}': {
    summary: 'Retrieve a webhook endpoint',
    description: 'An endpoint by its id (we_…).',
  },
  'DELETE /webhook_endpoints/{id}': { summary: 'Delete a webhook endpoint' },
  'GET /webhook_endpoints': { summary: 'List webhook endpoints' },
  'POST /webhook_endpoints/{id}/update': { summary: 'Update a webhook endpoint' },
  'GET /webhook_endpoints/{id}/reveal_token': { summary: "Reveal an endpoint's token" },
  'POST /webhook_endpoints/{id}/reveal_token': { summary: "Reveal an endpoint's token (POST)" },
  'POST /webhook_endpoints/{id}/roll_token': { summary: "Roll an endpoint's token" },
  'POST /webhook_endpoints/{id}/recover': { summary: 'Recover the events an endpoint missed' },
  'GET /events/{id}/deliveries': { summary: "List an event's deliveries" },
  'GET /events/{id}/attempts': { summary: "List an event's delivery attempts" },
  'POST /events/{id}/resend': { summary: 'Resend an event' },
  'GET /webhook_deliveries': { summary: 'List webhook deliveries' },
  'GET /webhook_deliveries/{id}': {
    summary: 'Retrieve a webhook delivery',
    description: 'A delivery by its id (wd_…): target, kind, status and attempt count.',
  },
  'GET /webhook_deliveries/{id}/attempts': { summary: "List a delivery's attempts" },
  'POST /webhook_deliveries/{id}/resend': { summary: 'Resend a delivery' },
  'POST /webhook_endpoints/{id}/check': { summary: 'Run the go-live check of an endpoint' },
  'GET /webhook_endpoints/{id}/checks': { summary: "List an endpoint's go-live checks" },
  'POST /webhooks/doctor': { summary: 'Diagnose a webhook signature' },
  'POST /webhook_deliveries/{id}/fast_forward': { summary: "Fast-forward a test delivery's retries" },
  'POST /admin/v1/merchants/create': {
    summary: 'Create a merchant',
    description: 'Creates a merchant and answers its test keys (shown only here) and capability flags.',
  },
  'GET /admin/v1/merchants': { summary: 'List merchants', description: 'Every merchant, newest first.' },
  'GET /admin/v1/merchants/{id}': { summary: 'Retrieve a merchant', description: 'A merchant by its id (mer_…).' },
  'POST /admin/v1/merchants/{id}/update': {
    summary: 'Update a merchant',
    description: 'Changes the name and the tokenization and MIT capabilities; they apply to the next request.',
  },
  'POST /admin/v1/merchants/{id}/roll_keys': {
    summary: "Roll a merchant's keys",
    description:
      'New keys of `mode` (`test` unless told `live`); the old ones of that mode stop working at once. Live keys only while the merchant has an enabled live processor account (409 `no_live_processor`).',
  },
  'POST /admin/v1/sandbox/dashboard_link': {
    summary: "A sign-in link for the sandbox merchant's Owner",
    description:
      "Development only (absent in production): a fresh one-time link (72 h) that signs in to the dashboard as the sandbox merchant's Owner, as `tessera start` prints one; `tessera dashboard-link` calls it. 404 `resource_missing` before the first start made the sandbox merchant.",
  },
  'POST /admin/v1/merchants/{id}/processor_accounts/create': {
    summary: 'Connect a processor account',
    description:
      "Connects the merchant to Adyen or Stripe, in test mode (the processor's test environment, in place of the sandbox for the test keys) or live. The credentials are sealed by the vault and never shown again; the answer's `webhookUrl` is what to enter at the processor. One enabled account per mode (409 `processor_account_exists`).",
  },
  'GET /admin/v1/merchants/{id}/processor_accounts': {
    summary: "List a merchant's processor accounts",
    description:
      'Every processor account of the merchant, oldest first, with its status and last notification; never a credential.',
  },
  'POST /admin/v1/processor_accounts/{id}/update': {
    summary: 'Update a processor account',
    description:
      'New credentials or base URL, or `status: disabled` (no new payment goes through it; payments already made still refund and settle through it) or `enabled`.',
  },
  'POST /admin/v1/vault/rotate_key': { summary: 'Rotate the vault key' },
  'POST /admin/v1/vault/rotate_master_key': { summary: 'Re-wrap the vault under the new master key' },
  'GET /admin/v1/audit/card_numbers': { summary: 'Find card numbers in stored free text' },
};

const id = (prefix: string) => `${prefix}_7301542996317045834`;

/** An example for each `pattern` of the schemas, so that Swagger UI never makes one from the expression. */
const patternExamples: Record<string, string> = {
  '^\\d{4}$': '4242',
  '^[A-Z]{3}$': 'USD',
  '^[A-Za-z]{3}$': 'USD',
  '^\\d+$': '1999',
  '^\\d{1,12}$': '1999',
  '^(?!0+$)\\d{1,12}$': '500',
  '^whsec_[A-Za-z0-9]{48}$': 'whsec_9fQ2rT7vXk1LmN3pB8sD4gH6jW0yZ5cA2eR7tU1iO3pK9sL4',
  // An ed25519 endpoint's public key (`v1a,` signatures, docs/decisions/0026), and a token of either kind.
  '^whpk_[A-Za-z0-9+/]{43}=$': 'whpk_LMPsIRXPd9NZY+95SM1X8ssPrrjOpu2D0tFIpwhTqqA=',
  '^(whsec_[A-Za-z0-9]{48}|whpk_[A-Za-z0-9+/]{43}=)$': 'whsec_9fQ2rT7vXk1LmN3pB8sD4gH6jW0yZ5cA2eR7tU1iO3pK9sL4',
  '^[A-Za-z]{2}$': 'US',
  '^[0-9+() .\\-]{3,32}$': '+1 415 555 0100',
  '^\\d{12,19}$': '4242424242424242',
  '^(0?[1-9]|1[0-2])$': '12',
  '^(\\d{2}|\\d{4})$': '2030',
  '^\\d{3,4}$': '123',
  '^https?://[^\\s/$.?#][^\\s]*$': 'https://shop.example.com/webhooks/tessera',
  '^[^<>"\'\\\\]*$': 'ACME SHOP',
  '^[A-Za-z][A-Za-z0-9_]{0,31}$': 'card',
  '^[Cc][Aa][Rr][Dd]$': 'card',
  '^(pt_\\d{19})?$': id('pt'),
  '^(?:[1-9]\\d{0,5}|1000000)$': '2',
};

/** Examples by field name for text fields without a pattern, where Swagger UI would show "string". */
const fieldExamples: Record<string, string> = {
  email: 'ada@example.com',
  firstName: 'Ada',
  lastName: 'Lovelace',
  merchantUserId: 'user-42',
  orderNo: 'order-1001',
  name: 'Ada Lovelace',
  description: 'Order 1001',
  line1: '1 Market Street',
  city: 'San Francisco',
  state: 'CA',
  postalCode: '94105',
};

type Node = Record<string, unknown>;
type Operation = {
  summary?: string;
  description?: string;
  security?: Array<Record<string, string[]>>;
  'x-codeSamples'?: unknown;
  requestBody?: { content?: Record<string, Node> };
  responses?: Record<string, { content?: Record<string, Node> }>;
};
export type OpenApiDocument = Node & { paths?: Record<string, Record<string, Operation>>; info?: Node };

function addExamples(node: unknown, property?: string): void {
  if (Array.isArray(node)) return node.forEach((item) => addExamples(item));
  if (!node || typeof node !== 'object') return;
  const schema = node as Node;
  if (schema.example === undefined && schema.examples === undefined) {
    const idPattern = typeof schema.pattern === 'string' ? /^\^([a-z]+)_\\d\{19\}\$$/.exec(schema.pattern) : null;
    const byPattern = idPattern ? id(idPattern[1]!) : patternExamples[schema.pattern as string];
    const byName =
      schema.type === 'string' && !schema.format && !schema.enum ? fieldExamples[property ?? ''] : undefined;
    if (byPattern ?? byName) schema.example = byPattern ?? byName;
  }
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'properties' && value && typeof value === 'object') {
      for (const [name, child] of Object.entries(value as Node)) addExamples(child, name);
    } else if (key !== 'example') addExamples(value);
  }
}

/** Routes a public key may call (docs/api.md#base-url-and-authentication): path → methods, as the server collects them. */
type PublicRoutes = ReadonlyMap<string, ReadonlySet<string>>;

/**
 * Summaries, descriptions, examples, code samples and security into the generated document, in
 * place. The examples of a merchant operation are those captured from a real run of the service
 * (src/http/reference-examples.json, written by npm run reference:capture): its request,
 * its 200 answer and one real error answer (that test fails when an operation has none).
 */
export function documentOperations(document: OpenApiDocument, publicRoutes: PublicRoutes = new Map()): void {
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(item)) {
      const merchantPath = path.startsWith(apiBasePath) ? path.slice(apiBasePath.length) : path;
      const key = `${method.toUpperCase()} ${merchantPath}`;
      const doc = operations[key];
      if (doc) {
        operation.summary ??= doc.summary;
        if (!operation.description && doc.description) operation.description = doc.description;
      }
      // The operator API is not in /docs (its own document, /admin/v1/openapi.json, for operators,
      // whom the SDK does not serve): it gets summaries, not merchant examples or samples.
      if (path.startsWith(adminBasePath)) continue;
      const captured = capturedExamples[key];
      const request: ExampleRequest = captured?.request ?? { path: merchantPath };
      const json = operation.requestBody?.content?.['application/json'];
      if (json && request.body !== undefined) json.example = request.body;
      const answer = captured?.answer;
      const answerJson = operation.responses?.['200']?.content?.['application/json'];
      if (answer && answerJson) answerJson.example = answer;
      // GET /events/stream: its text up to its first event, as a client reads it.
      const answerStream = operation.responses?.['200']?.content?.['text/event-stream'];
      if (typeof answer === 'string' && answerStream) answerStream.example = answer;
      if (captured) {
        const errorJson = operation.responses?.[String(captured.error.status)]?.content?.['application/json'];
        if (errorJson) errorJson.example = captured.error.answer;
      }
      operation['x-codeSamples'] = codeSamples(key, request);
      if (publicRoutes.get(path)?.has(method.toUpperCase())) {
        operation.security = [{ privateKey: [] }, { publicKey: [] }];
      }
    }
  }
  addExamples(document.paths);
  addExamples((document as { components?: unknown }).components);
}

/** The merchant API's document and the operator API's, from the one document Fastify makes. */
export function splitDocument(document: OpenApiDocument): { merchant: OpenApiDocument; admin: OpenApiDocument } {
  const paths = Object.entries(document.paths ?? {});
  const admin = Object.fromEntries(paths.filter(([path]) => path.startsWith(adminBasePath)));
  const merchant = Object.fromEntries(paths.filter(([path]) => !path.startsWith(adminBasePath)));
  const components = (document.components ?? {}) as Node & { securitySchemes?: Record<string, unknown> };
  const { operatorKey, ...merchantSchemes } = components.securitySchemes ?? {};
  return {
    merchant: { ...document, components: { ...components, securitySchemes: merchantSchemes }, paths: merchant },
    admin: {
      ...document,
      info: { ...document.info, title: 'Tessera operator API', description: operatorDescription },
      components: {
        ...components,
        securitySchemes: { operatorKey },
      },
      security: [{ operatorKey: [] }],
      paths: admin,
    },
  };
}

const operatorDescription =
  'The operator API of a Tessera installation: merchants, their keys and capabilities, and the vault key. ' +
  'Authenticate with the header `Authorization: Bearer ADMIN_KEY`, where ADMIN_KEY is the operator key ' +
  '(TESSERA_ADMIN_KEY, or the admin.key file of the data folder). Merchants never use it.';
