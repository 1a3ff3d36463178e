/**
 * docs/decisions/0011-shared-rate-limits.md: the dashboard's sign-in lockout is counted before the password is checked, so that
 * wrong passwords sent at once — to one process or to several on one PostgreSQL — cannot all be
 * checked: at most the limit are, and the account is locked.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { maxFailuresPerAccount } from '../src/team/service.js';
import { acceptLink, dashboardClient } from './helpers/dashboard.js';
import { databaseKind, startTestApp, type TestContext } from './helpers/harness.js';
import { startAnyService, stopService, type Running } from './helpers/cli-process.js';

const attemptsAtOnce = 30;
const wrongPasswordPage = /The e-mail address or the password is not right/;
const lockedPage = /Too many failed sign-ins for this account/;

/** A form token of our own, as a browser holds one from the sign-in page (double-submit cookie). */
function formToken() {
  const token = randomBytes(32).toString('base64url');
  return { cookie: `tessera_form=${token}`, field: token };
}

async function ownerWithPassword(ctx: TestContext, password: string): Promise<string> {
  const merchant = await ctx.merchant();
  const email = `owner-${randomBytes(4).toString('hex')}@shop.example`;
  const { link } = await ctx.tessera.db.transaction((tx) => ctx.tessera.team.createOwner(tx, merchant.id, email));
  const answer = await acceptLink(dashboardClient(ctx), link, password);
  assert.equal(answer.status, 303);
  return email;
}

/** How many answers said "wrong password" (the password was checked) and how many "locked". */
function tally(bodies: string[]) {
  return {
    checked: bodies.filter((body) => wrongPasswordPage.test(body)).length,
    locked: bodies.filter((body) => lockedPage.test(body)).length,
  };
}

describe(`sign-in lockout under concurrency (${databaseKind})`, () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await startTestApp();
  });
  after(async () => ctx.close());

  test(`checks at most ${maxFailuresPerAccount} of ${attemptsAtOnce} wrong passwords sent at once, and locks the account`, async () => {
    const password = 'correct horse battery staple';
    const email = await ownerWithPassword(ctx, password);
    const token = formToken();
    const signIn = (attempt: string, address: string) =>
      ctx.tessera.server.inject({
        method: 'POST',
        url: '/dashboard/sign-in',
        remoteAddress: address,
        headers: { cookie: token.cookie, 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ _csrf: token.field, email, password: attempt }).toString(),
      });
    // From many addresses, so that the per-address limit does not stop them first.
    const answers = await Promise.all(
      Array.from({ length: attemptsAtOnce }, (_, index) => signIn(`wrong-${index}`, `198.51.100.${index + 1}`)),
    );
    const { checked, locked } = tally(answers.map((answer) => answer.body));
    assert.ok(checked <= maxFailuresPerAccount, `${checked} wrong passwords were checked`);
    assert.equal(checked + locked, attemptsAtOnce);
    const right = await signIn(password, '203.0.113.9');
    assert.equal(right.statusCode, 429);
    assert.match(right.body, lockedPage);
  });
});

describe('sign-in lockout across two processes on one PostgreSQL', { skip: databaseKind !== 'postgres' }, () => {
  let ctx: TestContext;
  let dataDirs: string[] = [];
  let processes: Running[] = [];

  before(async () => {
    ctx = await startTestApp();
    const env = (dataDir: string) => ({
      NODE_ENV: 'test',
      DATABASE_URL: ctx.config.databaseUrl!,
      TESSERA_DATA_DIR: dataDir,
      TESSERA_MASTER_KEY: ctx.config.masterKey!.toString('hex'),
      TESSERA_ADMIN_KEY: ctx.operatorKey,
    });
    dataDirs = [0, 1].map(() => mkdtempSync(path.join(tmpdir(), 'tessera-fleet-sign-in-')));
    // Both at once, as a fleet starts. One that failed must not leave the other running: its pipes
    // would keep this file's process alive after the tests.
    const started = await Promise.allSettled(dataDirs.map((dataDir) => startAnyService(env(dataDir))));
    processes = started.flatMap((each) => (each.status === 'fulfilled' ? [each.value] : []));
    const failed = started.find((each) => each.status === 'rejected');
    if (failed) throw failed.reason;
  });
  after(async () => {
    await Promise.all(processes.map((running) => stopService(running)));
    for (const dataDir of dataDirs) rmSync(dataDir, { recursive: true, force: true });
    await ctx.close();
  });

  // One address (127.0.0.1) sends them all, fewer than its own limit (30), so that the account's
  // limit is what stops them.
  const fromOneAddress = 20;

  test(`${fromOneAddress} wrong passwords split over two processes: at most ${maxFailuresPerAccount} checked, then locked on both`, async () => {
    const password = 'correct horse battery staple';
    const email = await ownerWithPassword(ctx, password);
    const token = formToken();
    const signIn = async (running: Running, attempt: string) => {
      const response = await fetch(`${running.origin}/dashboard/sign-in`, {
        method: 'POST',
        headers: { cookie: token.cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ _csrf: token.field, email, password: attempt }).toString(),
        redirect: 'manual',
      });
      return { status: response.status, body: await response.text() };
    };
    const answers = await Promise.all(
      Array.from({ length: fromOneAddress }, (_, index) => signIn(processes[index % 2]!, `wrong-${index}`)),
    );
    const { checked, locked } = tally(answers.map((answer) => answer.body));
    assert.ok(checked <= maxFailuresPerAccount, `${checked} wrong passwords were checked`);
    assert.equal(checked + locked, fromOneAddress, JSON.stringify(answers.map((answer) => answer.status)));
    for (const running of processes) {
      const right = await signIn(running, password);
      assert.equal(right.status, 429);
      assert.match(right.body, lockedPage);
    }
  });
});

describe(
  'the sandbox Owner made by two starts at once on one PostgreSQL',
  { skip: databaseKind !== 'postgres' },
  () => {
    let ctx: TestContext;
    before(async () => {
      ctx = await startTestApp();
    });
    after(async () => ctx.close());

    // What each `tessera start` outside production does (src/composition/main.ts): the first start on a database
    // adds the sandbox merchant's Owner. Two at once both found none; one of them failed to start.
    test('both get a sign-in link, for the same one Owner', async () => {
      const merchant = await ctx.merchant();
      const email = `sandbox-${randomBytes(4).toString('hex')}@sandbox.localhost`;
      const links = await Promise.all(
        Array.from({ length: 4 }, () => ctx.tessera.team.sandboxOwnerLink(merchant.id, email)),
      );
      assert.equal(new Set(links).size, links.length);
      const owners = await ctx.tessera.db.query<{ count: string }>(
        "SELECT count(*) AS count FROM team_members WHERE merchant_id = $1 AND role = 'owner'",
        [merchant.id],
      );
      assert.equal(Number(owners[0]!.count), 1);
    });
  },
);
