// The SDK from CommonJS: require('@tessera/node') works as import does.
// Run: TESSERA_URL=http://127.0.0.1:8080 TESSERA_API_KEY=test_pr_… node require.cjs
const { Tessera, TesseraError } = require('@tessera/node');
const { verifyWebhook } = require('@tessera/node/webhook');

const tessera = new Tessera({ apiKey: process.env.TESSERA_API_KEY, baseUrl: process.env.TESSERA_URL });

async function main() {
  const customer = await tessera.customers.create({ firstName: 'Grace', lastName: 'Hopper' });
  console.log('customer', customer.id);
  try {
    await tessera.customers.retrieve('cus_0000000000000000000');
  } catch (err) {
    if (!(err instanceof TesseraError)) throw err;
    console.log('refused', err.status, err.code, err.param, err.traceId);
  }
  console.log('verifyWebhook', typeof verifyWebhook);
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
