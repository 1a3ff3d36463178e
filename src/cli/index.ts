#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { ConfigError } from '../config-rules.js';
import { webhooksCommand, webhooksUsage } from './webhooks.js';
import { webhooksHealthActions, webhooksHealthCommand, webhooksHealthUsage } from './webhooks-health.js';
import { goLiveActions, goLiveCommand, goLiveUsage } from './webhooks-golive.js';
import { listenCommand, listenUsage } from './listen.js';
import { triggerCommand, triggerUsage } from './trigger.js';
import { deliveriesCommand, eventsCommand, eventsUsage } from './events.js';
import { dashboardLinkCommand, merchantsCommand, merchantsUsage, operatorOptions } from './merchants.js';
import { operatorCall } from './client.js';
import { auditCommand, auditUsage } from './audit.js';
import { printJson } from './output.js';

const usage = `Usage: tessera <command> [options]

Commands:
  start                          run the service (API, hosted pages, webhook deliveries, background jobs)
  worker                         deliver webhooks and run background jobs, without the HTTP API
                                 (PostgreSQL only: any number share the database of the service)
  migrate                        apply database migrations and exit
${merchantsUsage}
  dashboard-link                 a fresh one-time dashboard sign-in link for the sandbox Owner
                                 (development: npm start prints one; a link works once)
  vault rotate-key               new vault data key; every secret at rest is re-encrypted
  vault rotate-master-key        re-wrap every data key under TESSERA_MASTER_KEY (the new master key), once
                                 every process runs with it and TESSERA_PREVIOUS_MASTER_KEY (docs/operations.md)
${auditUsage}
${webhooksHealthUsage}
${webhooksUsage}
${goLiveUsage}
${listenUsage}
${triggerUsage}
${eventsUsage}

start and worker take --no-migrate (TESSERA_AUTO_MIGRATE=off): apply no migration, refuse to start
while one is pending (fleets run tessera migrate once per deploy); tessera worker serves /health/live,
/health/ready and /metrics on --worker-health-port (TESSERA_WORKER_HEALTH_PORT, default 8081).
start, worker and migrate take --port, --host, --database-url, --data-dir, --public-url, --log-level,
--master-key, --node-env (or PORT, HOST, DATABASE_URL, TESSERA_DATA_DIR, TESSERA_PUBLIC_URL,
TESSERA_LOG_LEVEL, TESSERA_MASTER_KEY, NODE_ENV; the environment is the better place for a key).
The merchants, dashboard-link, vault and audit commands call the operator API of a running service: --url (TESSERA_URL,
default http://127.0.0.1:8080) and --admin-key (TESSERA_ADMIN_KEY, default: the data folder's
admin.key), so they work whether it runs on PGlite or PostgreSQL. The webhooks, listen, trigger, events
and deliveries commands call the merchant API with a merchant's private key: --url (TESSERA_URL) and --key (TESSERA_API_KEY).
`;

/*
 * The service's modules (main.js, the database) are imported by the commands that run it: the
 * commands that call a running service load only their HTTP client, and start in a fraction of the
 * time (docs/performance.md#test-suite-time).
 */
async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'start':
    case 'worker': {
      const config = loadConfig(process.env, rest);
      const { start, startWorker } = await import('../composition/main.js');
      const tessera = await (command === 'start' ? start(config) : startWorker(config));
      let stopping = false;
      const stop = (signal: string) => {
        if (stopping) return;
        stopping = true;
        tessera.logger.info({ signal }, 'stopping: finishing the requests and deliveries under way');
        // docs/operations.md#topology: out within 15 s whatever is still under way (a delivery stays leased and is
        // retried by another process; an unanswered request is the client's to retry).
        setTimeout(() => {
          tessera.logger.warn('stopped after 14 s with work still under way');
          process.exit(1);
        }, shutdownDeadlineMs).unref();
        // A person's Ctrl-C stops at once; SIGTERM (an orchestrator, a deploy) lets the balancer notice first.
        tessera.close({ delayMs: signal === 'SIGTERM' ? config.shutdownDelayMs : 0 }).then(
          () => process.exit(0),
          (err: unknown) => {
            tessera.logger.error({ err }, 'stopping failed');
            process.exit(1);
          },
        );
      };
      process.once('SIGINT', () => stop('SIGINT'));
      process.once('SIGTERM', () => stop('SIGTERM'));
      return -1;
    }
    case 'migrate': {
      const config = loadConfig(process.env, rest);
      const [{ openDb }, { migrate }] = await Promise.all([import('../db/db.js'), import('../db/migrate.js')]);
      const db = await openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2 });
      try {
        const applied = await migrate(db);
        process.stdout.write(applied.length ? `Applied ${applied.join(', ')}\n` : 'Nothing to apply\n');
      } finally {
        await db.close();
      }
      return 0;
    }
    case 'merchants':
      return merchantsCommand(rest);
    case 'audit':
      return auditCommand(rest);
    case 'dashboard-link':
      return dashboardLinkCommand(rest);
    case 'vault':
      return vaultCommand(rest);
    case 'webhooks':
      // The go-live tools print their own lines and exit codes; the rest print the API's answer.
      if ((webhooksHealthActions as readonly string[]).includes(rest[0] ?? '')) return webhooksHealthCommand(rest);
      return (goLiveActions as readonly string[]).includes(rest[0] ?? '')
        ? goLiveCommand(rest)
        : printJson(await webhooksCommand(rest));
    case 'listen':
      return listenCommand(rest);
    case 'trigger':
      return triggerCommand(rest);
    case 'events':
      return eventsCommand(rest);
    case 'deliveries':
      return deliveriesCommand(rest);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(usage);
      return command === undefined ? 1 : 0;
    default:
      process.stderr.write(`Unknown command '${command}'\n\n${usage}`);
      return 1;
  }
}

/** A process told to stop is gone by then, whatever it was doing (under the usual 15 s of orchestrators). */
const shutdownDeadlineMs = 14_000;

async function vaultCommand(argv: string[]): Promise<number> {
  const [action, ...rest] = argv;
  const routes: Record<string, string> = {
    'rotate-key': '/vault/rotate_key',
    'rotate-master-key': '/vault/rotate_master_key',
  };
  const route = routes[action ?? ''];
  if (!route) throw new ConfigError(`vault takes rotate-key or rotate-master-key\n\n${usage}`);
  const { values } = parseArgs({ args: rest, options: operatorOptions });
  return printJson(await operatorCall(values, 'POST', route, {}));
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof ConfigError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`tessera: ${(err as Error).message}\n`);
    } else {
      process.stderr.write(`tessera: ${(err as Error).stack ?? String(err)}\n`);
    }
    process.exitCode = 1;
  },
);
