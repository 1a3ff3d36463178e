/**
 * `npm run bench:connector`: the connector's own overhead per payment against the sandbox
 * (docs/performance.md#processor-connectors; issue 42 asks for under 10 %). One service on
 * PGlite, two merchants: one on the built-in sandbox, one on a test-mode Stripe processor account
 * whose processor is the stand-in for Stripe (test/helpers/stripe-stand-in.ts), answering at once
 * in this process. The same confirmed one-off payments are sent to each in alternated phases;
 * the figures are ratios of the Stripe merchant's to the sandbox merchant's in the same run:
 * payments per second, and the service's CPU per payment (the connector's own work: the request
 * written and sent, the answer read, the payment written before the call).
 *
 * Environment: BENCH_DURATION_SECONDS (10 per phase), BENCH_CONNECTIONS (16), BENCH_PAIRS (2: pairs
 * of alternated phases).
 */
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { call } from './api.js';
import { closedLoop, type PhaseResult } from './load.js';
import { childEnv, freePort, makeTempDir, repoRoot, runBenchmark, startChild } from './processes.js';
import { startStripeStandIn } from '../test/helpers/stripe-stand-in.js';

const durationS = Number(process.env.BENCH_DURATION_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16);
const pairs = Number(process.env.BENCH_PAIRS ?? 2);
const apiBase = '/api/services/v1';

/** Milliseconds of the service's CPU per answered payment in a phase. */
function cpuPerPaymentMs(phase: PhaseResult): number {
  const servicePct = phase.cpu.servicePct ?? Number.NaN;
  return ((servicePct / 100) * phase.durationS * 1000) / phase.requests;
}

runBenchmark(
  {
    title: `Tessera connector overhead — ${connections} connections, ${durationS} s per phase, ${pairs} pairs`,
    timeoutS: Number(process.env.BENCH_TIMEOUT_SECONDS ?? 900),
  },
  async (cleanup, lines) => {
    const standIn = await startStripeStandIn();
    cleanup.add('the stand-in for Stripe', () => standIn.close());
    const dataDir = await makeTempDir(cleanup, 'tessera-bench-connector-');
    const port = await freePort();
    const adminKey = `bench_operator_${randomBytes(24).toString('hex')}`;
    const service = await startChild(cleanup, {
      name: 'tessera (pglite)',
      args: [path.join(repoRoot, 'dist', 'cli', 'index.js'), 'start'],
      env: childEnv({
        // Outside production, so that the processor account may name the stand-in's http:// address.
        NODE_ENV: 'development',
        PORT: String(port),
        HOST: '127.0.0.1',
        TESSERA_DATA_DIR: dataDir,
        TESSERA_ADMIN_KEY: adminKey,
        TESSERA_MASTER_KEY: randomBytes(32).toString('hex'),
        TESSERA_PUBLIC_URL: `http://127.0.0.1:${port}`,
        TESSERA_LOG_LEVEL: 'warn',
      }),
      port,
      logFile: path.join(dataDir, 'service.log'),
      healthPath: '/health',
    });
    const admin = `${service.url}/admin/v1`;
    const merchant = async (name: string) => (await call(`${admin}/merchants/create`, adminKey, { name })) as any;
    const sandbox = await merchant('Bench sandbox');
    const stripe = await merchant('Bench Stripe');
    await call(`${admin}/merchants/${stripe.id}/processor_accounts/create`, adminKey, {
      processor: 'stripe',
      mode: 'test',
      credentials: { secretKey: standIn.secretKey, webhookSecret: standIn.webhookSecret },
      baseUrl: standIn.url,
    });

    const target = async (key: string, label: string) => {
      const method = await call(`${service.url}${apiBase}/payment_methods/create`, key, {
        type: 'card',
        card: { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' },
      });
      const body = JSON.stringify({ amount: '1999', currency: 'USD', paymentMethod: method.id, confirm: true });
      return (name: string) =>
        closedLoop({
          name: `${label}: ${name}`,
          baseUrl: service.url,
          connections,
          durationS,
          payment: true,
          servicePid: service.pid,
          request: {
            path: `${apiBase}/payment/create`,
            headers: { authorization: `Bearer ${key}` },
            nextBody: () => body,
          },
        });
    };
    const onSandbox = await target(sandbox.keys.privateKey, 'sandbox');
    const onStripe = await target(stripe.keys.privateKey, 'stripe');
    await onSandbox('warm-up');
    await onStripe('warm-up');

    const rows: string[] = [];
    const ratios: { rps: number; cpu: number }[] = [];
    for (let pair = 1; pair <= pairs; pair += 1) {
      // Alternated, so that a machine that slows during the run slows both sides alike.
      const first = pair % 2 === 1 ? await onSandbox(`pair ${pair}`) : await onStripe(`pair ${pair}`);
      const second = pair % 2 === 1 ? await onStripe(`pair ${pair}`) : await onSandbox(`pair ${pair}`);
      const [base, connector] = pair % 2 === 1 ? [first, second] : [second, first];
      for (const phase of [base, connector]) {
        if (phase.checks.failures > 0) throw new Error(`${phase.name}: ${phase.checks.firstFailure}`);
        rows.push(
          `${phase.name.padEnd(16)} ${phase.rps.toFixed(0).padStart(7)} payments/s  p50 ${phase.p50Ms.toFixed(1)} ms  ` +
            `p99 ${phase.p99Ms.toFixed(1)} ms  service CPU ${cpuPerPaymentMs(phase).toFixed(2)} ms/payment`,
        );
      }
      ratios.push({ rps: connector.rps / base.rps, cpu: cpuPerPaymentMs(connector) / cpuPerPaymentMs(base) });
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    lines.push(...rows);
    lines.push(
      `Stripe ÷ sandbox, median of ${pairs} pairs: payments/s ${median(ratios.map((r) => r.rps)).toFixed(3)}, ` +
        `service CPU per payment ${median(ratios.map((r) => r.cpu)).toFixed(3)}`,
    );
    lines.push(`Each pair: ${ratios.map((r) => `${r.rps.toFixed(3)} / ${r.cpu.toFixed(3)}`).join(', ')}`);
    process.stdout.write(`${lines.join('\n')}\n`);
  },
);
