/**
 * The opening of the API reference at /docs (issue 12): how to authenticate, a quickstart and the
 * sandbox test cards, so that a first integration needs no other page. test/api-reference.test.ts
 * checks that every test card of docs/api.md is listed here too.
 */
export const apiIntro = `Payment tokenization and webhook notification service. Every response is the envelope
\`{code, msg, data}\`; a failure names the field at fault in \`data.param\`.

**Authentication.** Send the header \`Authorization: Bearer PRIVATE_KEY\`, where PRIVATE_KEY is your private key
(\`test_pr_…\`; \`npm start\` prints the sandbox merchant's and keeps it in \`data/sandbox-merchant.json\`).
Every POST may carry an \`Idempotency-Key\`.

**Quickstart.**
1. \`POST /customers/create\` — keep \`data.id\` (\`cus_…\`).
2. \`POST /payment_methods/create\` with \`{"type":"card","card":{…}}\` — keep \`data.id\` (\`pm_…\`).
3. \`POST /payment/create\` with \`customerId\`, \`paymentMethod\`, \`amount\` (minor units), \`currency\`,
   \`confirm: "true"\` and \`setupFutureUsage: "on"\`: the card is stored for reuse.
4. Later, the same call with \`subsequentInitialType: "mit"\` charges the stored card without the customer.
5. \`POST /refunds/create\` with \`paymentId\` gives money back; \`POST /webhook_endpoints/create\` receives every
   change of state, signed (see the webhook guide in docs/webhooks.md).

**Sandbox test cards.** Any future expiry date and any 3-digit code (4 for American Express).

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
`;
