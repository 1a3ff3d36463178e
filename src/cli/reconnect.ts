import { setTimeout as sleep } from 'node:timers/promises';
import { systemClock } from '../clock.js';
import { isoTimestamp } from '../time.js';
import { ServiceUnavailableError } from './client.js';

/**
 * How `tessera deliveries tail` and `tessera listen` live through a service restart: they keep
 * running, say once that they lost the service and are reconnecting, wait longer after each failed
 * try (1 s, 2 s, 4 s, … at most 10 s: a restarting service is not hammered), and say when they are
 * back. Any other error (a rolled key, a refused request) still ends the command.
 */
const firstRetryDelayMs = 1_000;
const maxRetryDelayMs = 10_000;

export interface Reconnector {
  /** Reports a failed try: an unavailable service once (then quietly), anything else is thrown. */
  failed(err: unknown): void;
  /** Reports that the service answers again. */
  succeeded(): void;
  /** One try: `run`, then succeeded() or failed(). */
  attempt(run: () => Promise<void>): Promise<void>;
  /** Waits before the next try: `intervalMs` while connected, the back-off while lost. False once stopped. */
  wait(intervalMs: number): Promise<boolean>;
}

export function createReconnector(say: (line: string) => void, stopped: AbortSignal): Reconnector {
  let failures = 0;
  const stamp = () => isoTimestamp(systemClock.now());
  const reconnector: Reconnector = {
    failed(err) {
      if (!(err instanceof ServiceUnavailableError) || stopped.aborted) throw err;
      if (failures === 0) say(`${stamp()}  lost the service, reconnecting (Ctrl-C stops): ${err.message}`);
      failures += 1;
    },
    succeeded() {
      if (failures > 0) say(`${stamp()}  reconnected`);
      failures = 0;
    },
    async attempt(run) {
      try {
        await run();
      } catch (err) {
        reconnector.failed(err);
        return;
      }
      reconnector.succeeded();
    },
    async wait(intervalMs) {
      const delayMs =
        failures === 0 ? intervalMs : Math.min(maxRetryDelayMs, firstRetryDelayMs * 2 ** Math.min(failures - 1, 10));
      try {
        await sleep(delayMs, undefined, { signal: stopped });
        return true;
      } catch {
        return false;
      }
    },
  };
  return reconnector;
}
