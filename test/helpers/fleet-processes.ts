/**
 * Several `tessera start` processes on the PostgreSQL database of a test's Tessera (DESIGN §11):
 * each is a real process, called directly (no balancer), sharing the test Tessera's keys, so that
 * merchants made with ctx.merchant() work on all of them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestContext } from './harness.js';
import { killService, startAnyService, type Running } from './cli-process.js';

export interface Fleet {
  processes: Running[];
  /** Starts one more process on the same database (a replacement after a kill). */
  add(extraEnv?: Record<string, string>): Promise<Running>;
  kill(running: Running): Promise<void>;
  stop(): Promise<void>;
}

export async function startFleet(
  ctx: TestContext,
  count: number,
  extraEnv: Record<string, string> = {},
): Promise<Fleet> {
  if (!ctx.config.databaseUrl) throw new Error('a fleet needs PostgreSQL (TESSERA_TEST_DATABASE_URL)');
  const dataDirs: string[] = [];
  const processes: Running[] = [];
  async function add(moreEnv: Record<string, string> = {}): Promise<Running> {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'tessera-fleet-'));
    dataDirs.push(dataDir);
    const running = await startAnyService({
      NODE_ENV: 'test',
      DATABASE_URL: ctx.config.databaseUrl!,
      TESSERA_DATA_DIR: dataDir,
      TESSERA_MASTER_KEY: ctx.config.masterKey!.toString('hex'),
      TESSERA_ADMIN_KEY: ctx.operatorKey,
      ...extraEnv,
      ...moreEnv,
    });
    processes.push(running);
    return running;
  }
  for (let index = 0; index < count; index++) await add();
  return {
    processes,
    add,
    kill: killService,
    async stop() {
      // Killed, not stopped: these tests are about claims, and a graceful stop would wait for
      // attempts still held by a receiver. killService skips a process that has exited already.
      await Promise.all(processes.map((running) => killService(running)));
      for (const dataDir of dataDirs) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
