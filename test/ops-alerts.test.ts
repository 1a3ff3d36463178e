/**
 * docs/operations.md: the alert rules in ops/alerts.yml are valid Prometheus rules, as `promtool
 * check rules` (Debian's prometheus package; .ci/run installs it) says, and name the families the
 * service exports.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

const promtool = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
const missing = promtool.error !== undefined;

describe('ops/alerts.yml', () => {
  it(
    'passes promtool check rules',
    // CI installs promtool (.ci/run) and must not skip; elsewhere a missing tool says so.
    { skip: missing && process.env.CI !== 'true' ? 'promtool is not installed (apt-get install prometheus)' : false },
    () => {
      const checked = spawnSync('promtool', ['check', 'rules', 'ops/alerts.yml'], { encoding: 'utf8' });
      assert.equal(checked.error, undefined, 'promtool runs');
      assert.equal(checked.status, 0, `${checked.stdout}${checked.stderr}`);
      assert.match(checked.stdout, /SUCCESS: \d+ rules found/);
    },
  );

  it('covers payment failures, the webhook backlog, failing endpoints, processes that are down or not ready, PGlite upkeep and failing processors', () => {
    const rules = readFileSync('ops/alerts.yml', 'utf8');
    for (const family of [
      'tessera_payments_total{status="failed"}',
      'tessera_webhook_oldest_pending_seconds',
      'tessera_webhook_endpoints{health="failing"}',
      'up{job="tessera"}',
      'tessera_ready{job="tessera"}',
      'tessera_pglite_checkpoints_total{outcome="failed"}',
      'tessera_pglite_vacuums_total{outcome="failed"}',
      'tessera_processor_requests_total{outcome="error"}',
    ]) {
      assert.ok(rules.includes(family), family);
    }
  });
});
