import { createServer } from 'node:net';
import path from 'node:path';
import Fastify, { LogController, type FastifyBaseLogger } from 'fastify';
import { createTessera, type Tessera } from './app.js';
import { type Config } from '../config.js';
import { ConfigError } from '../config-rules.js';
import { apiBasePath } from '../http/server.js';
import { sandboxMerchant, sandboxOwnerEmail, writeSandboxFile, type SandboxKeys } from '../merchants/sandbox.js';

/**
 * `tessera start`: the service, its background jobs, and — outside production — a ready sandbox
 * merchant so that a newcomer can make a first call at once.
 */
export async function start(config: Config): Promise<Tessera> {
  await probePort(config);
  const tessera = await createTessera({ config, onStartupStep: announceStep }).finally(endSteps);
  // What can fail is done before listening, so a failed start leaves nothing listening.
  let sandbox: SandboxKeys | undefined;
  try {
    if (config.nodeEnv !== 'production' && !config.dataDir.startsWith('memory://')) {
      sandbox = await sandboxMerchant(tessera);
    }
    await tessera.server.listen({ port: config.port, host: config.host });
  } catch (err) {
    await tessera.close();
    throw listenError(err as NodeJS.ErrnoException, config);
  }
  try {
    tessera.jobs.start();
    if (config.webhookDispatcher === 'on') tessera.webhookDispatcher.start();
    process.stdout.write(`${(await banner(tessera, config, sandbox)).join('\n')}\n`);
  } catch (err) {
    await tessera.close();
    throw err;
  }
  return tessera;
}

/**
 * A port that cannot be listened on is said at once, before the database is opened (on a first
 * start, PGlite's is created and migrated first, which takes seconds): a probe listens on it and
 * closes. The listen once the service is ready still reports a port taken in between; an error the
 * probe cannot name is left to it too.
 */
async function probePort(config: Config, setting = 'PORT'): Promise<void> {
  if (config.port === 0) return;
  const probe = createServer();
  const failure = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
    probe.once('error', resolve);
    probe.listen({ port: config.port, host: config.host, exclusive: true }, () => resolve(undefined));
  });
  if (failure === undefined) {
    await new Promise((resolve) => probe.close(resolve));
    return;
  }
  const named = listenError(failure, config, setting);
  if (named instanceof ConfigError) throw named;
}

/** A slow start-up step, said before it runs, so that a first start is never long silent. */
function announceStep(step: string): void {
  endSteps();
  process.stdout.write(`Starting: ${step} …\n`);
  // No silent stretch over 10 s: a first start on PGlite creates its database (20 s and more on a
  // busy machine), so a step that lasts says so every 5 s (docs/decisions/0049-first-hour.md).
  const began = Date.now();
  stepTicker = setInterval(() => {
    process.stdout.write(`Starting: still ${step} (${Math.round((Date.now() - began) / 1000)} s) …\n`);
  }, 5000).unref();
}

let stepTicker: NodeJS.Timeout | undefined;

/** The start-up steps are over (done or failed): no more "still …" lines. */
function endSteps(): void {
  clearInterval(stepTicker);
  stepTicker = undefined;
}

async function banner(tessera: Tessera, config: Config, sandbox: SandboxKeys | undefined): Promise<string[]> {
  const baseUrl = `${tessera.publicUrl()}${apiBasePath}`;
  const lines = [
    `Tessera is listening on ${tessera.publicUrl()}`,
    `  API base URL:   ${baseUrl}`,
    `  API reference:  ${tessera.publicUrl()}/docs`,
  ];
  lines.push(`  Storage:        ${config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `PGlite in ${config.dataDir}`}`);
  lines.push(`  E-mail:         ${mailDestination(tessera)}`);
  if (config.webhookDispatcher === 'off') {
    lines.push(
      '  Webhooks:       not sent by this process (TESSERA_WEBHOOK_DISPATCHER=off); they wait in the database',
    );
  }
  if (tessera.operatorKey.created) {
    lines.push(
      `  Operator key (shown once; kept in ${path.join(config.dataDir, 'admin.key')}): ${tessera.operatorKey.value}`,
    );
  }
  if (sandbox) {
    const copy = await writeSandboxFile(config.dataDir, sandbox);
    // Development: the sandbox merchant's Owner and a fresh one-time sign-in link at every start.
    const ownerLink = await tessera.team.sandboxOwnerLink(sandbox.id, sandboxOwnerEmail);
    lines.push(
      `  Sandbox merchant ${sandbox.id} (tokenization and MIT on), private key: ${sandbox.privateKey}`,
      copy.error
        ? `  Sandbox keys:   kept in the database; not copied to ${copy.file} (${copy.error})`
        : `  Sandbox keys:   ${copy.file}`,
      `  Dashboard:      ${ownerLink}  (one-time sign-in as the sandbox Owner, valid 72 h; \`npx tessera dashboard-link\` prints a fresh one)`,
      '',
      'Try it:',
      `  curl -s -X POST ${baseUrl}/customers/create -H 'Authorization: Bearer ${sandbox.privateKey}' -H 'Content-Type: application/json' -d '{"firstName":"Ada","lastName":"Lovelace","email":"ada@example.com"}'`,
    );
  }
  return lines;
}

/** The usual reasons a port cannot be listened on, as one line naming the setting to change. */
function listenError(err: NodeJS.ErrnoException, config: Config, setting = 'PORT'): Error {
  const flag = setting === 'PORT' ? ' (or --port)' : ' (or --worker-health-port)';
  const where = `${config.host}:${config.port}`;
  if (err.code === 'EADDRINUSE') {
    return new ConfigError(
      `Port ${config.port} is in use (${where}): another process listens there. Stop it, or set ${setting}${flag} to a free port, e.g. ${setting}=${config.port === 65535 ? 8081 : config.port + 1}`,
    );
  }
  if (err.code === 'EACCES') {
    return new ConfigError(
      `Port ${config.port} needs privileges on this machine (${where}): set ${setting}${flag} to 1024 or above`,
    );
  }
  if (err.code === 'EADDRNOTAVAIL') {
    return new ConfigError(
      `HOST ${config.host} is not an address of this machine: set HOST (or --host), e.g. 127.0.0.1`,
    );
  }
  return err;
}

/** README.md#running-it: without an SMTP server, the banner says where the messages can be read instead. */
function mailDestination(tessera: Tessera): string {
  const destination = tessera.mail.destination;
  switch (destination.kind) {
    case 'smtp':
      return `SMTP ${destination.server} (TESSERA_SMTP_URL)`;
    case 'files':
      return `no SMTP server (TESSERA_SMTP_URL unset): each message is written as an .eml file into ${destination.folder}`;
    case 'memory':
      return 'no SMTP server (TESSERA_SMTP_URL unset): messages are kept in memory only (memory:// data folder)';
  }
}

/**
 * `tessera worker`: webhook deliveries and background jobs without the HTTP API, for scaling
 * delivery out: any number of workers (and services) may share one PostgreSQL (docs/architecture.md#what-tessera-is).
 */
export async function startWorker(config: Config): Promise<Tessera> {
  if (!config.databaseUrl) {
    throw new ConfigError(
      'tessera worker needs DATABASE_URL (PostgreSQL): PGlite is the database of one process, and `tessera start` delivers webhooks itself',
    );
  }
  await probePort({ ...config, port: config.workerHealthPort }, 'TESSERA_WORKER_HEALTH_PORT');
  const tessera = await createTessera({ config, processKind: 'worker', onStartupStep: announceStep }).finally(endSteps);
  // docs/operations.md#metrics: the worker's own small server: /health/live, /health/ready and /metrics. It also
  // holds the process, which the dispatcher's and the jobs' timers do not.
  const healthServer = Fastify({
    loggerInstance: tessera.logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
  });
  tessera.ops.routes(healthServer);
  try {
    await healthServer.listen({ port: config.workerHealthPort, host: config.host });
  } catch (err) {
    await tessera.close();
    throw listenError(
      err as NodeJS.ErrnoException,
      { ...config, port: config.workerHealthPort },
      'TESSERA_WORKER_HEALTH_PORT',
    );
  }
  tessera.jobs.start();
  if (config.webhookDispatcher === 'on') tessera.webhookDispatcher.start();
  const address = healthServer.server.address();
  const port = address && typeof address === 'object' ? address.port : config.workerHealthPort;
  process.stdout.write(
    `${
      config.webhookDispatcher === 'on'
        ? 'Tessera worker is delivering webhooks and running jobs (PostgreSQL, DATABASE_URL)'
        : 'Tessera worker is running jobs; it sends no webhooks (TESSERA_WEBHOOK_DISPATCHER=off)'
    }\n  Health and metrics: http://${config.host}:${port}/health/ready, /health/live, /metrics\n`,
  );
  return {
    ...tessera,
    async close(options) {
      // Readiness says "stopping" while the deliveries under way finish; the health server goes last.
      await tessera.close(options);
      await healthServer.close();
    },
  };
}
