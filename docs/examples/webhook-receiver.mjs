// The smallest webhook receiver (README, "Webhooks"): it verifies each notification over the raw
// body with the SDK's verifyWebhook, answers exactly "success" (anything else is retried), prints
// each event it verified as a JSON line, and runs until stopped (Ctrl-C). A notification that does
// not verify is refused with 400, and the reason is printed and sent back (the go-live check and
// the dashboard show it): a wrong token, a request time too far from now, a changed body.
// Endpoints send only the endpoint_ kind unless legacyNotifications is on (docs/webhooks.md).
// In your own project the import is '@tessera/node/webhook'; here it is this repository's build of it.
// Run: TESSERA_WEBHOOK_TOKEN=whsec_… PORT=3000 node docs/examples/webhook-receiver.mjs
import { createServer } from 'node:http';
import { verifyWebhook } from 'tessera/webhook';

const token = process.env.TESSERA_WEBHOOK_TOKEN;
if (!token) {
  console.error('TESSERA_WEBHOOK_TOKEN is not set: use the token of your endpoint (reveal_token)');
  process.exit(1);
}
const port = Number(process.env.PORT ?? 3000);

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
      const reason = error.reason ? `${error.reason}: ${error.message}` : error.message;
      console.error(`refused a delivery: ${reason}`);
      res.statusCode = 400;
      return res.end(`refused: ${reason}`);
    }
    const { id, type, sequence } = event;
    console.log(JSON.stringify({ verified: true, id, type, sequence, payment: event.data.id }));
    res.end('success');
  });
});
server.listen(port, '127.0.0.1', () => {
  console.error(`receiving webhooks on http://127.0.0.1:${server.address().port}/ (Ctrl-C stops)`);
});
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    server.close();
    server.closeAllConnections();
  });
}
