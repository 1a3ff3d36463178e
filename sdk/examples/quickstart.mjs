// The SDK quickstart (docs/sdk.md): a webhook receiver, a customer, a stored card, a first payment
// that stores it, a merchant-initiated payment (MIT) on it, a refund, and an error as an exception.
// At the end it deletes the webhook endpoint it registered, so nothing is sent to it once it exits.
// Run: TESSERA_URL=http://127.0.0.1:8080 TESSERA_API_KEY=test_pr_… node quickstart.mjs
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { Tessera, TesseraError, verifyWebhook } from '@tessera/node';

const tessera = new Tessera({ apiKey: process.env.TESSERA_API_KEY, baseUrl: process.env.TESSERA_URL });

// 1. A webhook receiver: verify over the raw body, then answer exactly "success".
let token; // the endpoint's webhook token, known once the endpoint is created below
const webhooks = new Map(); // payment id → the webhook of its success, once it has come
const webhookOf = (paymentId) => {
  if (!webhooks.has(paymentId)) {
    let resolve;
    const promise = new Promise((done) => (resolve = done));
    webhooks.set(paymentId, { promise, resolve });
  }
  return webhooks.get(paymentId);
};
const receiver = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    try {
      const event = verifyWebhook({ headers: req.headers, rawBody: Buffer.concat(chunks), token });
      if (event.type === 'endpoint_payment.payment_succeeded') webhookOf(event.data.id).resolve(event);
      res.end('success');
    } catch {
      // Not signed with this endpoint's token. The endpoint gets only the endpoint_ kind: the legacy
      // kind is sent only to endpoints created with legacyNotifications: true (docs/webhooks.md).
      res.statusCode = 400;
      res.end('rejected');
    }
  });
});
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const endpoint = await tessera.webhookEndpoints.create({
  url: `http://127.0.0.1:${receiver.address().port}/webhooks`,
  enabledEvents: ['payment.succeeded'],
});
token = endpoint.token;

// 2. A customer and a card (a sandbox test card: it always succeeds).
const customer = await tessera.customers.create({ email: 'ada@example.com', merchantUserId: randomUUID() });
const card = await tessera.paymentMethods.create({
  type: 'card',
  card: { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' },
});

// 3. The first payment stores the card for later (setupFutureUsage "on").
const first = await tessera.payments.create({
  amount: '1999',
  currency: 'USD',
  customerId: customer.id,
  paymentMethod: card.id,
  confirm: 'true',
  setupFutureUsage: 'on',
});
console.log('storing payment', first.id, first.status);

// 4. Later, without the customer: a merchant-initiated payment on the stored card.
const mit = await tessera.payments.create({
  amount: '500',
  currency: 'USD',
  customerId: customer.id,
  paymentMethod: card.id,
  confirm: 'true',
  subsequentInitialType: 'mit',
});
console.log('MIT payment', mit.id, mit.status);

// 5. Give part of the first payment back.
const refund = await tessera.refunds.create({ paymentId: first.id, amount: '500', reason: 'requested_by_customer' });
console.log('refund', refund.id, refund.status);

// 6. A refused request is a TesseraError naming the field at fault.
try {
  await tessera.payments.create({ amount: '12.50', currency: 'USD', paymentMethod: card.id });
} catch (err) {
  if (!(err instanceof TesseraError)) throw err;
  console.log('refused', err.status, err.code, err.param, err.traceId);
}

// 7. The webhooks of both payments arrive, verified.
for (const payment of [first, mit]) {
  const event = await webhookOf(payment.id).promise;
  console.log('webhook', event.type, event.data.id);
}

// 8. Clean up: without its endpoint, no later event is sent to this script's port once it has exited.
await tessera.webhookEndpoints.del(endpoint.id);
console.log('deleted', endpoint.id);
receiver.close();
