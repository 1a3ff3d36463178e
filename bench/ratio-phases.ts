/**
 * Issues 13 and 42: the phases of `npm run bench` with processes of their own (floor, growth,
 * webhook drain, connector overhead).
 */
import { connectorPhase } from './connector-phase.js';
import { runGrowth } from './growth.js';
import type { Cleanup, ChildServer } from './processes.js';
import { pgliteFloor, postgresFloor, webhookRatio, type RatioFigures } from './ratios.js';
import type { Settings } from './run-settings.js';
import { newStore, startService } from './service.js';

/** The database floor, the growth and the webhook drain of one store, each after the other. */
export async function ratioPhases(cleanup: Cleanup, settings: Settings, figures: RatioFigures): Promise<void> {
  const { backend } = figures;
  const progress = (text: string) => process.stderr.write(`[${backend}] ${text}\n`);
  if (settings.phases.has('floor')) {
    progress('database floor');
    figures.floor =
      backend === 'postgres'
        ? await postgresFloor(cleanup, settings.databaseServerUrl, settings.connections, settings.durationS)
        : await pgliteFloor(settings.quick ? 1000 : 5000, settings.quick ? 1 : 3);
  }
  if (settings.phases.has('growth')) {
    const store = await newStore(cleanup, settings, backend);
    let running: ChildServer | null = null;
    figures.growth = await runGrowth(
      {
        adminKey: store.adminKey,
        database: backend === 'postgres' ? { databaseUrl: store.databaseUrl } : { dataDir: store.dataDir },
        start: async () => {
          running = (await startService(cleanup, settings, backend, store)).service;
          return running.url;
        },
        stop: async () => {
          await running?.stop();
          running = null;
        },
      },
      { bigRows: settings.growthRows, requests: settings.growthRequests, progress },
    );
  }
  if (settings.phases.has('webhooks')) {
    progress(`webhook drain of ${settings.webhookDeliveries} deliveries and the bare sender (bench/webhooks.ts)`);
    figures.webhooks = await webhookRatio(cleanup, backend, {
      deliveries: settings.webhookDeliveries,
      databaseServerUrl: settings.databaseServerUrl,
    });
  }
  if (settings.phases.has('connector')) {
    progress(`connector overhead, ${settings.connectorRounds} round(s) (bench/connector-phase.ts)`);
    figures.connector = await connectorPhase(cleanup, { ...settings, rounds: settings.connectorRounds }, backend);
  }
}
