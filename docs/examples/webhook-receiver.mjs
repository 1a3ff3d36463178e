// The smallest webhook receiver (README, "Webhooks"): it verifies each notification over the raw
// body with the SDK's verifyWebhook, answers exactly "success" (anything else is retried), prints
// what it verified, and exits after the first payment.succeeded, or after 30 seconds without one.
// Endpoints send only the endpoint_ kind unless legacyNotifications is on (docs/webhooks.md), so
// everything that does not verify is refused.
// In your own project the import is '@tessera/node/webhook'; here it is this repository's build of it.
// Run: TESSERA_WEBHOOK_TOKEN=whsec_… RECEIVER_PORT=3000 node docs/examples/webhook-receiver.mjs
import { createServer } from 'node:http';
import { verifyWebhook } from 'tessera/webhook';

const token = process.env.TESSERA_WEBHOOK_TOKEN;
const port = Number(process.env.RECEIVER_PORT ?? 3000);
const giveUp = setTimeout(() => {
  console.error('no payment.succeeded within 30 seconds');
  process.exit(1);
}, 30_000);

const server = createServer((req, res) => {
  // Anything but a POST is a readiness probe (the README's block waits for one to answer).
  if (req.method !== 'POST') return res.end('ready');
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    let event;
    try {
      event = verifyWebhook({ headers: req.headers, rawBody: Buffer.concat(chunks), token });
    } catch (error) {
      console.error(`rejected: ${error.reason ?? error.message}`);
      res.statusCode = 400;
      return res.end('rejected');
    }
    const { id, type, sequence } = event;
    console.log(JSON.stringify({ verified: true, id, type, sequence, payment: event.data.id }));
    res.end('success', () => {
      if (event.type !== 'endpoint_payment.payment_succeeded') return;
      clearTimeout(giveUp);
      server.close();
      server.closeAllConnections();
    });
  });
});
server.listen(port, '127.0.0.1');
