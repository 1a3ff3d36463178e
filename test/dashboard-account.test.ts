import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Secret, TOTP } from 'otpauth';
import { startTestApp, type TestContext } from './helpers/harness.js';
import { acceptLink, dashboardClient, linkInMail, type DashboardClient } from './helpers/dashboard.js';

describe('dashboard: two-factor sign-in and ownership transfer (issue 11)', () => {
  let ctx: TestContext;
  let merchantId: string;
  let owner: DashboardClient;
  let developer: DashboardClient;
  let administrator: DashboardClient;
  const secrets = new Map<string, string>();
  const password = 'correct horse battery';

  const codeOf = (secret: string, offsetMs = 0) =>
    new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: ctx.clock.now().getTime() + offsetMs });
  const nextStep = () => ctx.clock.advance(30_000);

  /** Starts enrolment and returns the secret the page shows. */
  async function startEnrolment(client: DashboardClient): Promise<string> {
    const started = await client.post('/dashboard/account/two-factor/start');
    assert.equal(started.status, 200, started.body);
    const secret = /id="totp-secret">([A-Z2-7]+)</.exec(started.body)?.[1];
    assert.ok(secret, 'the secret is shown as text');
    assert.match(started.body, /otpauth:\/\/totp\/Tessera:[^"<]*secret=/);
    return secret;
  }

  async function signIn(email: string) {
    const client = dashboardClient(ctx);
    await client.get('/dashboard/sign-in');
    const answer = await client.post('/dashboard/sign-in', { email, password });
    return { client, answer, challenge: /name="challenge" value="([^"]+)"/.exec(answer.body)?.[1] ?? '' };
  }

  before(async () => {
    ctx = await startTestApp();
    const created = await ctx.tessera.server.inject({
      method: 'POST',
      url: '/admin/v1/merchants/create',
      headers: { authorization: `Bearer ${ctx.operatorKey}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'Factor shop', ownerEmail: 'owner@factor.test' }),
    });
    const data = created.json().data;
    merchantId = data.id;
    owner = dashboardClient(ctx);
    assert.equal((await acceptLink(owner, data.ownerSetPasswordUrl, password)).status, 303);
    for (const role of ['developer', 'administrator']) {
      await owner.post('/dashboard/team/invite', { email: `${role}@factor.test`, name: role, role });
      const client = dashboardClient(ctx);
      assert.equal((await acceptLink(client, linkInMail(ctx, `${role}@factor.test`), password)).status, 303);
      if (role === 'developer') developer = client;
      else administrator = client;
    }
  });
  after(() => ctx?.close());

  const auditCount = async (action: string) => {
    const rows = await ctx.tessera.db.query<{ count: string | number }>(
      'SELECT count(*) AS count FROM audit_log WHERE merchant_id = $1 AND action = $2',
      [merchantId, action],
    );
    return Number(rows[0]!.count);
  };

  it('turns two-factor on only after a right code, shows the secret once and stores it encrypted', async () => {
    const secret = await startEnrolment(owner);
    const wrong = await owner.post('/dashboard/account/two-factor/confirm', { code: '000000' });
    assert.equal(wrong.status, 400);
    assert.match(wrong.body, /id="f-code-error"/);
    assert.doesNotMatch(wrong.body, new RegExp(secret), 'the secret is not shown again');
    assert.doesNotMatch((await owner.get('/dashboard/account/two-factor')).body, new RegExp(secret));
    const stored = await ctx.tessera.db.query<Record<string, string | null>>(
      "SELECT totp_secret_encrypted, totp_pending_encrypted FROM team_members WHERE email = 'owner@factor.test'",
    );
    assert.equal(stored[0]!.totp_secret_encrypted, null, 'not on before a right code');
    assert.ok(stored[0]!.totp_pending_encrypted && !stored[0]!.totp_pending_encrypted.includes(secret));
    // Still signs in with the password alone.
    assert.equal((await signIn('owner@factor.test')).answer.status, 303);
    const confirmed = await owner.post('/dashboard/account/two-factor/confirm', { code: codeOf(secret) });
    assert.equal(confirmed.status, 200);
    assert.match(confirmed.body, /Two-factor sign-in is on/);
    assert.equal(await auditCount('team.two_factor_enabled'), 1);
    secrets.set('owner', secret);
  });

  it('asks an enrolled member for a code after the password, and accepts each code once', async () => {
    nextStep();
    const first = await signIn('owner@factor.test');
    assert.equal(first.answer.status, 200);
    assert.match(first.answer.body, /Enter your code/);
    assert.ok(!first.client.cookies.has('tessera_session'), 'no session before the code');
    const wrong = await first.client.post('/dashboard/sign-in/code', { challenge: first.challenge, code: '123456' });
    assert.equal(wrong.status, 401);
    const code = codeOf(secrets.get('owner')!);
    const right = await first.client.post('/dashboard/sign-in/code', { challenge: first.challenge, code });
    assert.equal(right.status, 303);
    assert.equal((await first.client.get('/dashboard/team')).status, 200);
    // The same code again (a replay within its 30 seconds) is refused, as is the used challenge.
    const replay = await signIn('owner@factor.test');
    assert.equal(
      (await replay.client.post('/dashboard/sign-in/code', { challenge: replay.challenge, code })).status,
      401,
    );
    nextStep();
    const usedChallenge = await first.client.post('/dashboard/sign-in/code', {
      challenge: first.challenge,
      code: codeOf(secrets.get('owner')!),
    });
    assert.equal(usedChallenge.status, 401);
    assert.match(usedChallenge.body, /enter your password again/);
  });

  it('limits wrong codes like wrong passwords', async () => {
    // A clean window: the earlier tests' wrong codes count too.
    ctx.clock.advance(16 * 60 * 1000);
    const attempt = await signIn('owner@factor.test');
    for (let index = 0; index < 5; index += 1) {
      const wrong = await attempt.client.post('/dashboard/sign-in/code', {
        challenge: attempt.challenge,
        code: '999999',
      });
      assert.equal(wrong.status, 401);
    }
    const code = codeOf(secrets.get('owner')!);
    const limited = await attempt.client.post('/dashboard/sign-in/code', { challenge: attempt.challenge, code });
    assert.equal(limited.status, 429);
    assert.match(limited.body, /Too many wrong codes/);
    ctx.clock.advance(16 * 60 * 1000);
    const later = await signIn('owner@factor.test');
    const code2 = codeOf(secrets.get('owner')!);
    assert.equal(
      (await later.client.post('/dashboard/sign-in/code', { challenge: later.challenge, code: code2 })).status,
      303,
    );
  });

  it('lets the Owner require two-factor for the team: members without it can only enrol', async () => {
    const required = await owner.post('/dashboard/team/two-factor', { required: 'on' });
    assert.equal(required.status, 200, required.body);
    assert.equal(await auditCount('team.two_factor_required:on'), 1);
    const sent = await developer.get('/dashboard/developers/webhooks');
    assert.equal(sent.status, 303);
    assert.equal(sent.location, '/dashboard/account/two-factor');
    // A fresh password sign-in lands in the same place.
    const fresh = await signIn('developer@factor.test');
    assert.equal(fresh.answer.status, 303);
    assert.equal((await fresh.client.get('/dashboard/payments')).location, '/dashboard/account/two-factor');
    const secret = await startEnrolment(developer);
    nextStep();
    assert.equal((await developer.post('/dashboard/account/two-factor/confirm', { code: codeOf(secret) })).status, 200);
    assert.equal((await developer.get('/dashboard/developers/webhooks')).status, 200);
    secrets.set('developer', secret);
    // While the team requires it, it cannot be turned off.
    nextStep();
    const refused = await developer.post('/dashboard/account/two-factor/disable', { code: codeOf(secret) });
    assert.equal(refused.status, 400);
    assert.match(refused.body, /requires two-factor/);
  });

  it('turns two-factor off with a right code only', async () => {
    assert.equal((await owner.post('/dashboard/team/two-factor', { required: 'off' })).status, 200);
    nextStep();
    const secret = secrets.get('developer')!;
    assert.equal((await developer.post('/dashboard/account/two-factor/disable', { code: '000000' })).status, 400);
    assert.equal((await developer.post('/dashboard/account/two-factor/disable', { code: codeOf(secret) })).status, 200);
    assert.equal(await auditCount('team.two_factor_disabled'), 1);
    assert.equal((await signIn('developer@factor.test')).answer.status, 303, 'password alone again');
  });

  it('transfers ownership from the Owner only; the old Owner becomes Administrator (audited)', async () => {
    const adminId = (await ctx.tessera.team.list(merchantId)).find((member) => member.role === 'administrator')!.id;
    const developerId = (await ctx.tessera.team.list(merchantId)).find((member) => member.role === 'developer')!.id;
    assert.equal((await administrator.get('/dashboard/team/owner')).status, 403);
    const byAdmin = await administrator.post('/dashboard/team/transfer-ownership', { memberId: adminId });
    assert.equal(byAdmin.status, 403);
    const nobody = await owner.post('/dashboard/team/transfer-ownership', { memberId: 'tm_0000000000000000000' });
    assert.equal(nobody.status, 400);
    assert.match(nobody.body, /id="f-memberId-error"/);
    const moved = await owner.post('/dashboard/team/transfer-ownership', { memberId: developerId });
    assert.equal(moved.status, 303);
    const roles = new Map((await ctx.tessera.team.list(merchantId)).map((member) => [member.email, member.role]));
    assert.equal(roles.get('developer@factor.test'), 'owner');
    assert.equal(roles.get('owner@factor.test'), 'administrator');
    assert.equal([...roles.values()].filter((role) => role === 'owner').length, 1);
    assert.equal(await auditCount('team.ownership_transferred'), 1);
    assert.equal((await owner.get('/dashboard/team/owner')).status, 403, 'the old Owner no longer has it');
    assert.equal((await developer.get('/dashboard/team/owner')).status, 200);
  });
});
