/**
 * Several `tessera start` processes on one PostgreSQL (docs/operations.md#topology), each a real process started
 * here on a free loopback port.
 *
 * - `startFleet({ ctx, apiProcesses, env })`: on the database of a test's Tessera, sharing its keys
 *   (merchants made with ctx.merchant() work on every process), each process called directly;
 *   `add()` starts one more (a replacement after a kill, or one with settings of its own).
 * - `startFleet({ balancer: true })`: a fleet as a platform team runs one, on a database of its
 *   own: the API processes and a `tessera worker` behind a real HAProxy (round robin, health check
 *   on /health/ready), scraped by a real Prometheus. test/fleet.test.ts uses `fleet.baseUrl`
 *   (through the balancer) or `fleet.apis[i]` (one process).
 *
 * stop() kills every process (these tests are about claims: a graceful stop would wait for attempts
 * still held by a receiver) and removes what was made (a database of its own is dropped).
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestDatabase, type TestContext } from './harness.js';
import { killService, spawnCli, startAnyService, type LongRunningCli, type Running } from './cli-process.js';

export interface FleetOptions {
  /** The test Tessera whose database and keys the processes share; without it, a database of the fleet's own. */
  ctx?: TestContext;
  /** How many API processes start at once (3). */
  apiProcesses?: number;
  env?: Record<string, string>;
}

export interface Fleet {
  /** The API processes, each called directly (its baseUrl). */
  apis: Running[];
  adminKey: string;
  databaseUrl: string;
  /** Starts one more API process on the same database, outside the balancer, with `env` added. */
  add(env?: Record<string, string>): Promise<Running>;
  /** `kill -9` of one process (nothing if it exited already). */
  kill(running: Running): Promise<void>;
  /** A new merchant, created through the operator API of the first process: its private key. */
  merchantKey(): Promise<string>;
  /** The same, with both keys. */
  merchantKeys(): Promise<{ privateKey: string; publicKey: string }>;
  stop(): Promise<void>;
}

export interface BalancedFleet extends Fleet {
  /** The merchant API through the balancer. */
  baseUrl: string;
  balancerOrigin: string;
  worker: LongRunningCli;
  workerOrigin: string;
  prometheusOrigin: string;
  /** A PromQL instant query through Prometheus's HTTP API: the result vector. */
  query(promql: string): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>>;
}

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A long-running Debian tool (haproxy, prometheus) whose output is kept for failure messages. */
function daemon(command: string, args: string[]): { child: ChildProcess; output: () => string } {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { child, output: () => output };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, tries = 600): Promise<T> {
  for (let attempt = 0; attempt < tries; attempt++) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${what}: not in time`);
}

export function startFleet(options: FleetOptions & { balancer: true }): Promise<BalancedFleet>;
export function startFleet(options?: FleetOptions & { balancer?: false }): Promise<Fleet>;
export async function startFleet(options: FleetOptions & { balancer?: boolean } = {}): Promise<Fleet | BalancedFleet> {
  const { ctx } = options;
  if (ctx && !ctx.config.databaseUrl) throw new Error('a fleet needs PostgreSQL (TESSERA_TEST_DATABASE_URL)');
  const database = ctx ? undefined : await createTestDatabase({ migrated: true });
  const databaseUrl = ctx ? ctx.config.databaseUrl! : database!.url;
  const work = mkdtempSync(path.join(tmpdir(), 'tessera-fleet-'));
  const adminKey = ctx ? ctx.operatorKey : `operator_${randomBytes(16).toString('hex')}`;
  const env = {
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    TESSERA_MASTER_KEY: ctx ? ctx.config.masterKey!.toString('hex') : randomBytes(32).toString('hex'),
    TESSERA_ADMIN_KEY: adminKey,
    TESSERA_TRUST_PROXY: '127.0.0.1',
    TESSERA_WEBHOOK_RETRY_DELAYS_SECONDS: '1,1,1',
    TESSERA_SHUTDOWN_DELAY_MS: '1500',
    ...options.env,
  };
  const started: Array<{ child: ChildProcess }> = [];
  const apis: Running[] = [];
  let dataDirs = 0;
  const stop = async () => {
    for (const { child } of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 200));
    await database?.drop().catch(() => {});
    rmSync(work, { recursive: true, force: true });
  };
  const add = async (moreEnv: Record<string, string> = {}): Promise<Running> => {
    // A data folder each: on PostgreSQL it holds only what a process keeps on disk (the keys file).
    const dataDir = path.join(work, `data-${(dataDirs += 1)}`);
    const api = await startAnyService({ ...env, TESSERA_DATA_DIR: dataDir, ...moreEnv }, 400_000);
    started.push(api);
    apis.push(api);
    return api;
  };
  const fleet: Fleet = {
    apis,
    adminKey,
    databaseUrl,
    add,
    kill: killService,
    async merchantKey() {
      return (await fleet.merchantKeys()).privateKey;
    },
    async merchantKeys() {
      const response = await fetch(`${apis[0]!.origin}/admin/v1/merchants/create`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `Fleet ${randomBytes(3).toString('hex')}`, tokenization: true, mit: true }),
      });
      const body = (await response.json()) as any;
      assert.equal(body.code, 'success', JSON.stringify(body));
      return body.data.keys as { privateKey: string; publicKey: string };
    },
    stop,
  };
  try {
    // One after another: development starts create the sandbox merchant, which two first starts at
    // once race for (team_members_email).
    for (let index = 0; index < (options.apiProcesses ?? 3); index++) await add();
    if (!options.balancer) return fleet;
    return { ...fleet, ...(await balance(apis.slice(), env, work, adminKey, started)) };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The worker, HAProxy in front of `apis` and Prometheus scraping them all. */
async function balance(
  apis: Running[],
  env: Record<string, string>,
  work: string,
  adminKey: string,
  started: Array<{ child: ChildProcess }>,
): Promise<Omit<BalancedFleet, keyof Fleet>> {
  const worker = spawnCli(['worker'], { ...env, TESSERA_WORKER_HEALTH_PORT: '0' });
  started.push(worker);
  const [, workerOrigin] = await worker.waitFor(/Health and metrics: (http:\/\/[\d.]+:\d+)\//, 400_000);

  const balancerPort = await freePort();
  const haproxyConfig = path.join(work, 'haproxy.cfg');
  writeFileSync(
    haproxyConfig,
    [
      'global',
      '  maxconn 2000',
      'defaults',
      '  mode http',
      '  timeout connect 2s',
      '  timeout client 30s',
      '  timeout server 30s',
      // A request refused by a process that died or stopped goes to another (nothing was done).
      '  retries 3',
      '  option redispatch',
      '  retry-on conn-failure empty-response',
      'frontend api',
      `  bind 127.0.0.1:${balancerPort}`,
      '  option forwardfor',
      '  default_backend tessera',
      'backend tessera',
      '  balance roundrobin',
      '  option httpchk GET /health/ready',
      // Generous on a loaded machine: a slow readiness answer must not take a live process out.
      '  timeout check 5s',
      '  http-check expect status 200',
      ...apis.map((api, index) => `  server api${index} ${new URL(api.origin).host} check inter 1s fall 3 rise 2`),
      '',
    ].join('\n'),
  );
  const haproxy = daemon('haproxy', ['-db', '-f', haproxyConfig]);
  started.push(haproxy);
  const balancerOrigin = `http://127.0.0.1:${balancerPort}`;
  await until('haproxy answers', async () => ((await fetch(`${balancerOrigin}/health/ready`)).ok ? true : undefined));

  const prometheusPort = await freePort();
  const prometheusConfig = path.join(work, 'prometheus.yml');
  const targets = [...apis.map((api) => new URL(api.origin).host), new URL(workerOrigin!).host];
  writeFileSync(
    prometheusConfig,
    [
      'global:',
      '  scrape_interval: 1s',
      'scrape_configs:',
      '  - job_name: tessera',
      '    authorization:',
      `      credentials: ${adminKey}`,
      '    static_configs:',
      `      - targets: [${targets.map((target) => `'${target}'`).join(', ')}]`,
      '',
    ].join('\n'),
  );
  const prometheus = daemon('prometheus', [
    `--config.file=${prometheusConfig}`,
    `--storage.tsdb.path=${path.join(work, 'prometheus-data')}`,
    `--web.listen-address=127.0.0.1:${prometheusPort}`,
  ]);
  started.push(prometheus);
  const prometheusOrigin = `http://127.0.0.1:${prometheusPort}`;
  await until('prometheus is ready', async () => ((await fetch(`${prometheusOrigin}/-/ready`)).ok ? true : undefined));

  return {
    baseUrl: `${balancerOrigin}/api/services/v1`,
    balancerOrigin,
    worker,
    workerOrigin: workerOrigin!,
    prometheusOrigin,
    async query(promql) {
      const response = await fetch(`${prometheusOrigin}/api/v1/query?query=${encodeURIComponent(promql)}`);
      const body = (await response.json()) as any;
      assert.equal(body.status, 'success', JSON.stringify(body));
      return body.data.result;
    },
  };
}

export { killService };
