// The example shop of docs/checkout.md ("Browser card collection"): serves tessera-js.html, a page
// that collects the card with tessera.js, and creates its payments on the server with the private
// key (POST /pay answers only the payment's client secret). test/card-js-browser.test.ts runs it.
// Run, with `npm start` running (its sandbox merchant has tokenization, for "Save my card"):
//   TESSERA_URL=http://127.0.0.1:8080 TESSERA_PRIVATE_KEY=$(jq -r .privateKey data/sandbox-merchant.json) \
//   TESSERA_PUBLIC_KEY=$(jq -r .publicKey data/sandbox-merchant.json) SHOP_PORT=3000 node docs/examples/tessera-js-shop.mjs
// then open http://127.0.0.1:3000 (another origin than Tessera's, as a real shop is).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const tesseraUrl = (process.env.TESSERA_URL ?? 'http://127.0.0.1:8080').replace(/\/$/, '');
const privateKey = process.env.TESSERA_PRIVATE_KEY ?? '';
const publicKey = process.env.TESSERA_PUBLIC_KEY ?? '';
const port = Number(process.env.SHOP_PORT ?? 3000);
// Optional: where Tessera sends this payment's notifications (a dynamic webhook endpoint).
const notifyUrl = process.env.SHOP_NOTIFY_URL;

const page = readFileSync(new URL('./tessera-js.html', import.meta.url), 'utf8')
  .replaceAll('{{TESSERA_URL}}', tesseraUrl)
  .replaceAll('{{PUBLIC_KEY}}', publicKey);

async function tessera(path, body) {
  const response = await fetch(`${tesseraUrl}/api/services/v1${path}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${privateKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = await response.json();
  if (answer.code !== 'success') throw new Error(`${answer.code}: ${answer.msg}`);
  return answer.data;
}

/** The shop decides the amount, never the browser; a card to keep needs a customer to keep it for. */
async function startPayment({ email, save }) {
  const customer = save ? await tessera('/customers/create', { email }) : null;
  const payment = await tessera('/payment/create', {
    amount: '2500',
    currency: 'USD',
    orderNo: `order-${Date.now()}`,
    receiptEmail: email,
    ...(customer ? { customerId: customer.id, setupFutureUsage: 'on' } : {}),
    ...(notifyUrl ? { notifyUrl } : {}),
  });
  return { clientSecret: payment.clientSecret };
}

const server = createServer((req, res) => {
  if (req.method === 'POST' && req.url === '/pay') {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', async () => {
      res.setHeader('Content-Type', 'application/json');
      try {
        const input = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
        res.end(JSON.stringify(await startPayment({ email: String(input.email ?? ''), save: input.save === true })));
      } catch (error) {
        res.statusCode = 502;
        res.end(JSON.stringify({ error: error.message }));
      }
    });
    return;
  }
  if (req.method === 'GET' && (req.url === '/' || req.url?.startsWith('/?'))) {
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    return res.end(page);
  }
  res.statusCode = 404;
  res.end('not found');
});
server.listen(port, '127.0.0.1', () => {
  console.log(`shop listening on http://127.0.0.1:${server.address().port}`);
});
