/**
 * The opening of the API reference at /docs (issues 12, 21): the guides — quickstart,
 * authentication, the error catalog, idempotency, pagination, webhooks, test cards, going live —
 * so that a first integration needs no other page. test/api-reference.test.ts checks that every
 * test card of docs/api.md is listed here too.
 */
import type { ErrorCode } from '../core/errors.js';
import { codeStatuses } from './error-status.js';

/** What each code of the closed catalog (docs/api.md#error-catalog) means to the caller. */
const errorMeanings: Record<ErrorCode, string> = {
  invalid_request:
    'A field breaks its rule, is unknown (the closest known name is suggested) or is missing; `data.param` names it',
  idempotency_error: 'The `Idempotency-Key` was used with another body',
  payment_method_not_bound: 'CIT or MIT with a customer and payment method that no storing payment bound',
  payment_method_bound_elsewhere: 'The payment method is bound to another customer',
  duplicate_order: 'The `orderNo` belongs to a payment that has not failed or been canceled',
  invalid_state: 'The object is not in a state that allows this action (capture a canceled payment, …)',
  amount_too_large: 'A refund of more than is left to refund; `data` says what is left',
  authentication_error: 'The key is missing, malformed or unknown',
  permission_denied: 'The key may not do this (a public key outside its four routes, live-only rules, …)',
  tokenization_not_enabled: '`setupFutureUsage: on` without the tokenization capability (ask your account manager)',
  mit_not_enabled: '`subsequentInitialType: mit` without the MIT capability',
  resource_missing: "No such object for this key (another merchant's objects included)",
  endpoint_disabled: 'Recover of a disabled webhook endpoint: enable it first',
  no_live_processor:
    'Live keys, or a live payment, while the merchant has no enabled live processor account: the operator connects or enables one',
  processor_account_exists:
    'The merchant already has an enabled processor account for that mode; `data.accountId` names it: disable it first',
  bank_account_missing: 'A payout in a currency without a bank account: the Owner or the operator adds one first',
  payout_not_cancelable:
    'A payout the bank has taken (`in_transit` or later) is not canceled; `data.status` says its status',
  dispute_not_open:
    'Evidence or accept on a dispute that takes no response (closed, under review, or past `dueBy`); `data.status` says its state',
  rate_limited: 'Too many public-key requests; retry after `Retry-After` seconds',
  internal_error: "Our fault; logged with the request's `X-TraceId`, which support asks for",
  service_unavailable:
    'The database or the rate limit store cannot be reached, or the process is stopping; nothing was done: retry after `Retry-After`',
};

const errorCatalog = codeStatuses
  .map(([code, status]) => `| \`${code}\` | ${status} | ${errorMeanings[code]} |`)
  .join('\n');

/** "400, 401, … or 503": every HTTP status of the catalogue below, from it, so the two cannot disagree. */
const errorStatuses = [...new Set(codeStatuses.map(([, status]) => status))].sort((a, b) => a - b);
const errorStatusList = `${errorStatuses.slice(0, -1).join(', ')} or ${errorStatuses.at(-1)}`;

/**
 * The guides of the reference (docs/api.md#the-api-reference): each \`#\` heading is a section of the reference's
 * navigation, searchable and linkable (\`/docs#section/Quickstart\`).
 */
export const apiIntro = `Payment tokenization and webhook notification service. Base URL: \`http://HOST:PORT/api/services/v1\`.
Every response is the envelope \`{code, msg, data}\`; a failure names the field at fault in \`data.param\`.
Every operation below shows a request, its answer and an error answer captured from a real run,
with curl and \`@tessera/node\` samples (set \`TESSERA_URL\` and \`TESSERA_API_KEY\`).

# Quickstart

1. \`POST /customers/create\` — keep \`data.id\` (\`cus_…\`).
2. \`POST /payment_methods/create\` with \`{"type":"card","card":{…}}\` — keep \`data.id\` (\`pm_…\`).
3. \`POST /payment/create\` with \`customerId\`, \`paymentMethod\`, \`amount\` (minor units), \`currency\`,
   \`confirm: "true"\` and \`setupFutureUsage: "on"\`: the card is stored for reuse.
4. Later, the same call with \`subsequentInitialType: "mit"\` charges the stored card without the customer.
5. \`POST /refunds/create\` with \`paymentId\` gives money back; \`POST /webhook_endpoints/create\` receives every
   change of state, signed (see Webhooks below).

# Authentication

Send the header \`Authorization: Bearer PRIVATE_KEY\`, where PRIVATE_KEY is your private key (\`test_pr_…\`;
\`npm start\` prints the sandbox merchant's and keeps it in \`data/sandbox-merchant.json\`). A public key
(\`test_pu_…\`) is for the customer's browser or app: it may create and read payment methods, and confirm or
read a payment with that payment's \`clientSecret\` header; anything else answers 403 \`permission_denied\`.
A key never sees another merchant's objects (404).

# Errors

HTTP ${errorStatusList} with \`{"code": "<error code>", "msg": "<sentence>", "data": {"param": …}}\`.
A declined payment is not an error: it is created (200) with \`status: "failed"\` and \`errorCode\`.

| Code | HTTP | Meaning |
| --- | --- | --- |
${errorCatalog}

# Idempotency

Send \`Idempotency-Key: <unique text>\` on any POST: a retry with the same key and body answers the first
answer again (the payment is made once); the same key with another body is 400 \`idempotency_error\`.
Keys are kept 24 hours. Every answer carries \`X-TraceId\`.

# Pagination

Lists answer \`data: {data: […], hasMore}\`, newest first. \`limit\` 1–100 (default 10); the next page is
\`startingAfter=<last id of this page>\`, the previous \`endingBefore=<first id>\`. Payments, customers and
refunds filter by \`created[gt|gte|lt|lte]\`.

# Webhooks

Create an endpoint (\`POST /webhook_endpoints/create\`) or send \`notifyUrl\` on a payment. Each event is a
POST with headers \`Request-Time\` and \`Signature\` = hex HMAC-SHA256 of \`<request-time>.<raw body>\` keyed with
the endpoint's token; answer the body \`success\`, or it is retried after 30s, 1m, 2m, 5m, 10m, 15m, 30m, 1h, 2h,
4h, 8h and 8h. Handle duplicates; use \`sequence\` to ignore a stale event. \`verifyWebhook\` of \`@tessera/node\`
checks all of it.

# Test cards

Any future expiry date and any 3-digit code (4 for American Express).

| Number | Behaviour |
| --- | --- |
| 4242424242424242 | Visa, succeeds |
| 5555555555554444 | Mastercard, succeeds |
| 378282246310005 | American Express, succeeds |
| 3566002020360505 | JCB, succeeds |
| 6011111111111117 | Discover, succeeds |
| 4000000000000002 | declined, \`card_declined\` |
| 4000000000000077 | declined, \`card_declined\` (every payment) |
| 4000000000009995 | declined, \`insufficient_funds\` |
| 4000000000000069 | declined, \`expired_card\` |
| 4000000000000127 | declined, \`incorrect_cvc\` |
| 4000002500003155 | 3-D Secure challenge on the storing payment and on CIT; MIT succeeds without it |
| 4000000000000341 | storing payment succeeds; every later MIT is declined |
| 4000000000000630 | \`processing\` first, \`succeeded\` a few seconds later |
| 4000000000000259 | succeeds, then is reversed after the fact (a second event) |
| 4000000000004954 | high risk: \`failed\` with \`risk_rejected\` |
| 4000000000005126 | payment succeeds; every refund goes \`pending\`, then \`failed\` (\`card_closed\`) |
| 4000000000007726 | payment succeeds; every refund succeeds at once |

# Going live

1. Run the go-live check of each endpoint (\`POST /webhook_endpoints/{id}/check\`, or \`tessera webhooks check\`):
   every case must pass.
2. Verify signatures and compare the amount of each notification with your own order (docs/webhooks.md#acknowledgement-and-retries).
3. Ask your account manager for the tokenization and MIT capabilities you use.
4. Ask your account manager for live keys: they are issued once a live processor account (Adyen or Stripe) is
   connected for you, and your live payments go through it.
5. Swap the test keys for live ones (\`live_pr_…\`, \`live_pu_…\`); test cards do not work in live mode. A declined
   live payment keeps the processor's own reason in \`processorReason\`.
`;
