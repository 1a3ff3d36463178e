/**
 * `npm run bench:egress`: what sending webhooks through an egress proxy (docs/webhooks.md#sending-addresses-allow-lists,
 * TESSERA_WEBHOOK_PROXY) costs the drain, as a ratio to the drain without it in the same run.
 *
 *   npm run bench:egress                   2 pairs of runs (direct then proxy, proxy then direct)
 *   BENCH_EGRESS_DELIVERIES=4000 npm run bench:egress
 *
 * Each run: a Tessera in this process on PGlite in memory with its dispatcher stopped takes MIT
 * payments (one endpoint, endpoint_ kind only) until BENCH_EGRESS_DELIVERIES deliveries wait; then
 * the dispatcher drains them (runOnce until the receiver has them all) and the rate is deliveries
 * per second of that drain. The receiver (bench/receiver-server.ts) and Squid (Debian's, as in the
 * tests) run in processes of their own on 127.0.0.1. The receiver answers at once, so the figure
 * is the sender's and the proxy's cost, not a receiver's.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { createTessera } from '../src/composition/app.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { startSquid, squidBinary } from '../test/helpers/squid.js';
import { cards } from './cards.js';
import { childEnv, freePort, makeTempDir, repoRoot, runBenchmark, startChild, type Cleanup } from './processes.js';
import { apiBase, ReceiverClient } from './webhooks-setup.js';

const deliveries = Number(process.env.BENCH_EGRESS_DELIVERIES ?? 2000);
const pairs = Number(process.env.BENCH_EGRESS_PAIRS ?? 2);

async function drainOnce(receiver: ReceiverClient, proxyUrl: string | undefined): Promise<number> {
  const operatorKey = randomBytes(16).toString('hex');
  const config = loadConfig({
    NODE_ENV: 'development',
    TESSERA_DATA_DIR: 'memory://',
    TESSERA_MASTER_KEY: randomBytes(32).toString('hex'),
    TESSERA_ADMIN_KEY: operatorKey,
    TESSERA_LOG_LEVEL: 'silent',
    TESSERA_WEBHOOK_POLL_INTERVAL_MS: '3600000',
    TESSERA_WEBHOOK_CONCURRENCY_PER_TARGET: '16',
    ...(proxyUrl ? { TESSERA_WEBHOOK_PROXY: proxyUrl } : {}),
  });
  const tessera = await createTessera({ config, logger: createLogger('silent') });
  try {
    const call = async (url: string, key: string, body: unknown) => {
      const response = await tessera.server.inject({
        method: 'POST',
        url,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        payload: JSON.stringify(body),
      });
      if (response.statusCode !== 200) throw new Error(`${url}: ${response.body}`);
      return JSON.parse(response.body).data;
    };
    const merchant = await call('/admin/v1/merchants/create', operatorKey, {
      name: 'Egress',
      tokenization: true,
      mit: true,
    });
    const key: string = merchant.keys.privateKey;
    await call(`${apiBase}/webhook_endpoints/create`, key, {
      url: `${receiver.server.url}/egress`,
      legacyNotifications: false,
    });
    const method = await call(`${apiBase}/payment_methods/create`, key, {
      type: 'card',
      card: { ...cards[0]!, expMonth: '12', expYear: '2030' },
    });
    for (let index = 0; index < deliveries; index++) {
      await call(`${apiBase}/payment/create`, key, {
        amount: '100',
        currency: 'USD',
        paymentMethod: method.id,
        confirm: true,
      });
    }
    await receiver.reset();
    const started = performance.now();
    let arrived = 0;
    while (arrived < deliveries) {
      await tessera.webhookDispatcher.runOnce();
      arrived = (await receiver.stats()).distinct;
    }
    return deliveries / ((performance.now() - started) / 1000);
  } finally {
    await tessera.close();
  }
}

runBenchmark(
  { title: `Tessera egress benchmark — ${deliveries} deliveries a drain, ${pairs} pairs`, timeoutS: 1800 },
  async (cleanup: Cleanup, lines) => {
    if (!squidBinary) throw new Error('Squid is not installed (apt-get install squid)');
    const port = await freePort();
    const logDir = await makeTempDir(cleanup, 'tessera-bench-egress-');
    const server = await startChild(cleanup, {
      name: 'receiver',
      args: ['--import', 'tsx', path.join(repoRoot, 'bench', 'receiver-server.ts'), String(port)],
      env: childEnv({}),
      port,
      logFile: path.join(logDir, 'receiver.log'),
      healthPath: '/health',
    });
    const receiver = new ReceiverClient(server, ['/egress']);
    const squid = await startSquid();
    try {
      for (let pair = 1; pair <= pairs; pair++) {
        const direct = await drainOnce(receiver, undefined);
        const proxied = await drainOnce(receiver, squid.url);
        const line =
          `pair ${pair}: drain direct ${direct.toFixed(0)}/s, through Squid ${proxied.toFixed(0)}/s, ` +
          `proxy ÷ direct ${(proxied / direct).toFixed(2)}`;
        lines.push(line);
        process.stdout.write(`${line}\n`);
      }
    } finally {
      await squid.close();
      await server.stop();
    }
  },
);
