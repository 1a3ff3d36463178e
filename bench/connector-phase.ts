/**
 * Issue 42: the connectors' own overhead per payment against the sandbox (docs/performance.md,
 * "Processor connectors"; decision 0051). One service, three merchants: one on the built-in
 * sandbox, one on a test-mode Stripe account and one on a test-mode Adyen account, whose
 * processors are the stand-ins (test/helpers/) in a process of their own, answering at once. The
 * same confirmed one-off payment is sent to each in turn, the order rotated every round so that a
 * machine that slows during the run slows all alike; each round gives Stripe ÷ sandbox and
 * Adyen ÷ sandbox: payments per second, and the service process's own CPU per payment (from
 * /proc/<pid>/stat, so the stand-ins' CPU and the load generator's are not counted; on PGlite the
 * database runs inside the service and is counted, on PostgreSQL its processes are shown apart).
 */
import path from 'node:path';
import { writeFile } from 'node:fs/promises';
import { call } from './api.js';
import { closedLoop, type PhaseResult } from './load.js';
import { childEnv, makeTempDir, repoRoot, startProcess, tail, type Cleanup } from './processes.js';
import type { StandIns } from './processor-stand-ins.js';
import type { Settings } from './run-settings.js';
import type { Backend } from './settings.js';
import { startService } from './service.js';

const apiBase = '/api/services/v1';
export const connectorGoal = 1.1;
export const connectorNames = ['stripe', 'adyen'] as const;
type Target = 'sandbox' | (typeof connectorNames)[number];

export interface ConnectorRatio {
  /** Medians over the rounds of connector ÷ sandbox in the same round. */
  rps: number;
  cpu: number;
  /** Service and PostgreSQL CPU together (PostgreSQL only). */
  cpuWithDatabase: number | null;
  cpuMs: number;
  sandboxCpuMs: number;
  each: string;
}

export interface ConnectorFigures {
  rounds: number;
  ratios: Record<(typeof connectorNames)[number], ConnectorRatio>;
  rows: string[];
}

/** Milliseconds of CPU per answered payment in a phase: the service's, or with PostgreSQL's. */
function cpuPerPaymentMs(phase: PhaseResult, withDatabase = false): number {
  const pct = (phase.cpu.servicePct ?? Number.NaN) + (withDatabase ? (phase.cpu.postgresPct ?? Number.NaN) : 0);
  return ((pct / 100) * phase.durationS * 1000) / phase.requests;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export async function connectorPhase(
  cleanup: Cleanup,
  settings: Pick<Settings, 'durationS' | 'connections' | 'cpuProfDir' | 'databaseServerUrl'> & { rounds: number },
  backend: Backend,
): Promise<ConnectorFigures> {
  const progress = (text: string) => process.stderr.write(`[${backend}] connector: ${text}\n`);
  const logDir = await makeTempDir(cleanup, 'tessera-bench-stand-ins-');
  const standInProcess = await startProcess(cleanup, {
    name: 'processor stand-ins',
    args: ['--import', 'tsx', path.join(repoRoot, 'bench', 'processor-stand-ins.ts')],
    env: childEnv({ NODE_ENV: 'test' }),
    logFile: path.join(logDir, 'stand-ins.log'),
    readyWhen: /^stand-ins \{.*\}$/m,
  });
  const standIns = JSON.parse(/^stand-ins (\{.*\})$/m.exec(standInProcess.output())![1]!) as StandIns;
  // Outside production, so that the processor accounts may name the stand-ins' http:// addresses.
  const { service, adminKey } = await startService(cleanup, settings, backend, undefined, {
    env: { NODE_ENV: 'development' },
    profileName: `service-${backend}-connector.cpuprofile`,
  });
  const windows: Array<{ name: string; startUs: string; endUs: string }> = [];
  try {
    const admin = `${service.url}/admin/v1`;
    const merchant = async (name: string) => (await call(`${admin}/merchants/create`, adminKey, { name })) as any;
    const accounts = {
      sandbox: null,
      stripe: {
        processor: 'stripe',
        credentials: { secretKey: standIns.stripe.secretKey, webhookSecret: standIns.stripe.webhookSecret },
        baseUrl: standIns.stripe.url,
      },
      adyen: {
        processor: 'adyen',
        credentials: {
          apiKey: standIns.adyen.apiKey,
          merchantAccount: standIns.adyen.merchantAccount,
          hmacKey: standIns.adyen.hmacKey,
        },
        baseUrl: standIns.adyen.url,
      },
    };
    // The stand-ins approve these cards (test/helpers/); the sandbox approves the first.
    const cards: Record<Target, string> = {
      sandbox: '4242424242424242',
      stripe: '4242424242424242',
      adyen: '4111111111111111',
    };
    const targets = {} as Record<Target, (name: string) => Promise<PhaseResult>>;
    for (const target of ['sandbox', ...connectorNames] as Target[]) {
      const created = await merchant(`Bench ${target}`);
      const account = accounts[target];
      if (account !== null) {
        await call(`${admin}/merchants/${created.id}/processor_accounts/create`, adminKey, {
          ...account,
          mode: 'test',
        });
      }
      const key = created.keys.privateKey as string;
      const method = await call(`${service.url}${apiBase}/payment_methods/create`, key, {
        type: 'card',
        card: { cardNo: cards[target], expMonth: '12', expYear: '2030', securityCode: '123' },
      });
      const body = JSON.stringify({ amount: '1999', currency: 'USD', paymentMethod: method.id, confirm: true });
      targets[target] = async (name: string) => {
        const startUs = process.hrtime.bigint() / 1000n;
        const result = await closedLoop({
          name: `${target} ${name}`,
          baseUrl: service.url,
          connections: settings.connections,
          durationS: settings.durationS,
          payment: true,
          servicePid: service.pid,
          withPostgres: backend === 'postgres',
          request: {
            path: `${apiBase}/payment/create`,
            headers: { authorization: `Bearer ${key}` },
            nextBody: () => body,
          },
        });
        windows.push({
          name: `${target}#${name}`,
          startUs: String(startUs),
          endUs: String(process.hrtime.bigint() / 1000n),
        });
        if (result.checks.failures > 0 || result.checks.succeeded !== result.checks.success) {
          throw new Error(`${result.name}: ${result.checks.firstFailure ?? 'a payment did not succeed'}`);
        }
        return result;
      };
    }
    progress('warm-up');
    for (const target of ['sandbox', ...connectorNames] as Target[]) await targets[target]('warm-up');

    const orders: Target[][] = [
      ['sandbox', 'stripe', 'adyen'],
      ['adyen', 'sandbox', 'stripe'],
      ['stripe', 'adyen', 'sandbox'],
    ];
    const rows: string[] = [];
    const perRound: Array<Record<Target, PhaseResult>> = [];
    for (let round = 1; round <= settings.rounds; round += 1) {
      progress(`round ${round} of ${settings.rounds}`);
      const results = {} as Record<Target, PhaseResult>;
      for (const target of orders[(round - 1) % orders.length]!) results[target] = await targets[target](String(round));
      perRound.push(results);
      for (const target of ['sandbox', ...connectorNames] as Target[]) {
        const phase = results[target];
        rows.push(
          `${phase.name.padEnd(10)} ${phase.rps.toFixed(0).padStart(6)} payments/s  p50 ${phase.p50Ms.toFixed(1)} ms  ` +
            `p99 ${phase.p99Ms.toFixed(1)} ms  service CPU ${cpuPerPaymentMs(phase).toFixed(3)} ms/payment` +
            (backend === 'postgres' ? `  with PostgreSQL ${cpuPerPaymentMs(phase, true).toFixed(3)} ms` : ''),
        );
      }
    }
    const ratios = {} as ConnectorFigures['ratios'];
    for (const name of connectorNames) {
      const each = perRound.map((round) => ({
        rps: round[name].rps / round.sandbox.rps,
        cpu: cpuPerPaymentMs(round[name]) / cpuPerPaymentMs(round.sandbox),
        cpuWithDatabase: cpuPerPaymentMs(round[name], true) / cpuPerPaymentMs(round.sandbox, true),
      }));
      ratios[name] = {
        rps: median(each.map((r) => r.rps)),
        cpu: median(each.map((r) => r.cpu)),
        cpuWithDatabase: backend === 'postgres' ? median(each.map((r) => r.cpuWithDatabase)) : null,
        cpuMs: median(perRound.map((round) => cpuPerPaymentMs(round[name]))),
        sandboxCpuMs: median(perRound.map((round) => cpuPerPaymentMs(round.sandbox))),
        each: each.map((r) => `${r.rps.toFixed(2)}/${r.cpu.toFixed(2)}`).join(' '),
      };
    }
    if (settings.cpuProfDir) {
      await writeFile(
        path.join(settings.cpuProfDir, `phases-${backend}-connector.json`),
        `${JSON.stringify({ profile: `service-${backend}-connector.cpuprofile`, clock: 'monotonic µs', windows }, null, 2)}\n`,
      );
    }
    return { rounds: settings.rounds, ratios, rows };
  } catch (err) {
    progress(`service log (end):\n${await tail(service.logFile)}`);
    throw err;
  } finally {
    await service.stop();
    await standInProcess.stop();
  }
}
