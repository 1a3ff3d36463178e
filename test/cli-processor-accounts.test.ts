import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { databaseKind, storeIndependent, migratedStorage, type TestStorage } from './helpers/harness.js';
import { runCli, startService, stopService, type RunningService } from './helpers/cli-process.js';

// Test credentials made for this file: nothing any processor knows.
const stripeLive = {
  secretKey: 'sk_live_CliSecretValue0001XyZw',
  webhookSecret: 'whsec_CliWebhookSigning0001',
};
const stripeLiveRolled = {
  secretKey: 'sk_live_CliSecretValue0002AbCd',
  webhookSecret: 'whsec_CliWebhookSigning0002',
};
const adyenTest = {
  apiKey: 'AQEcliAdyenApiKeyValue0001Qrst',
  merchantAccount: 'ShopExampleECOM',
  hmacKey: '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056',
};
const secrets = [...Object.values(stripeLive), ...Object.values(stripeLiveRolled), adyenTest.apiKey, adyenTest.hmacKey];

function assertNoSecret(text: string): void {
  for (const secret of secrets) assert.ok(!text.includes(secret), `a credential was printed: ${text}`);
}

interface Account {
  id: string;
  processor: string;
  mode: string;
  status: string;
  credentialsHint: string;
  webhookUrl: string;
  lastNotificationAt: string | null;
}

describe(
  `tessera merchants processor accounts against a started service (${databaseKind})`,
  { skip: storeIndependent },
  () => {
    let storage: TestStorage | undefined;
    let running: RunningService;
    let cliEnv: Record<string, string>;
    let merchantId: string;

    before(async () => {
      storage = await migratedStorage('tessera-cli-processors-');
      running = await startService(storage.env);
      cliEnv = { TESSERA_URL: running.origin, TESSERA_DATA_DIR: storage.dataDir };
      const made = await runCli(['merchants', 'create', '--name', 'Live Shop'], cliEnv);
      assert.equal(made.code, 0, made.stderr);
      merchantId = (JSON.parse(made.stdout) as { id: string }).id;
    });
    after(async () => {
      await stopService(running);
      await storage?.remove();
    });

    test('connects, lists, rolls live keys, disables and re-keys an account; credentials never printed', async () => {
      const none = await runCli(['merchants', 'processor-accounts', merchantId], cliEnv);
      assert.equal(none.code, 0, none.stderr);
      assert.match(none.stdout, /^No processor account: tessera merchants connect-processor /);

      // Live keys need an enabled live account.
      const early = await runCli(['merchants', 'roll-keys', merchantId, '--mode', 'live'], cliEnv);
      assert.equal(early.code, 1);
      assert.match(early.stderr, /no_live_processor/);

      // Stripe live from stdin; Adyen test from a file.
      const stripe = await runCli(
        [
          'merchants',
          'connect-processor',
          merchantId,
          '--processor',
          'stripe',
          '--mode',
          'live',
          '--credentials-file',
          '-',
          '--base-url',
          'http://127.0.0.1:9',
        ],
        cliEnv,
        JSON.stringify(stripeLive),
      );
      assert.equal(stripe.code, 0, stripe.stderr);
      assertNoSecret(stripe.stdout + stripe.stderr);
      const stripeAccount = JSON.parse(stripe.stdout) as Account & { baseUrl: string };
      assert.match(stripeAccount.id, /^pa_/);
      assert.equal(stripeAccount.processor, 'stripe');
      assert.equal(stripeAccount.mode, 'live');
      assert.equal(stripeAccount.status, 'enabled');
      assert.equal(stripeAccount.credentialsHint, '…XyZw');
      assert.equal(stripeAccount.baseUrl, 'http://127.0.0.1:9');
      assert.ok(stripeAccount.webhookUrl.endsWith(`/processor_webhooks/${stripeAccount.id}`), stripeAccount.webhookUrl);

      const file = path.join(storage!.dataDir, 'adyen-credentials.json');
      writeFileSync(file, JSON.stringify(adyenTest), { mode: 0o600 });
      const adyen = await runCli(
        [
          'merchants',
          'connect-processor',
          merchantId,
          '--processor',
          'adyen',
          '--mode',
          'test',
          '--credentials-file',
          file,
        ],
        cliEnv,
      );
      assert.equal(adyen.code, 0, adyen.stderr);
      assertNoSecret(adyen.stdout + adyen.stderr);
      const adyenAccount = JSON.parse(adyen.stdout) as Account;
      assert.equal(adyenAccount.processor, 'adyen');
      assert.equal(adyenAccount.credentialsHint, '…Qrst');

      // The table: one account a row, "never" before the first notification, the webhook URL last.
      const listed = await runCli(['merchants', 'processor-accounts', merchantId], cliEnv);
      assert.equal(listed.code, 0, listed.stderr);
      assertNoSecret(listed.stdout);
      const [header, ...rows] = listed.stdout.trimEnd().split('\n');
      assert.match(header!, /^ID +PROCESSOR +MODE +STATUS +CREDENTIALS +LAST NOTIFICATION +WEBHOOK URL$/);
      assert.equal(rows.length, 2);
      const stripeRow = rows.find((row) => row.startsWith(stripeAccount.id)) ?? '';
      assert.match(stripeRow, / +stripe +live +enabled +…XyZw +never +http:\/\/\S+\/processor_webhooks\/pa_\w+$/);
      const json = await runCli(['merchants', 'processor-accounts', merchantId, '--json'], cliEnv);
      assert.equal(json.code, 0, json.stderr);
      const page = JSON.parse(json.stdout) as { data: Account[] };
      assert.deepEqual(page.data.map((account) => account.id).sort(), [stripeAccount.id, adyenAccount.id].sort());

      const live = await runCli(['merchants', 'roll-keys', merchantId, '--mode', 'live'], cliEnv);
      assert.equal(live.code, 0, live.stderr);
      const keys = (JSON.parse(live.stdout) as { keys: { privateKey: string; publicKey: string } }).keys;
      assert.match(keys.privateKey, /^live_pr_/);
      assert.match(keys.publicKey, /^live_pu_/);

      // New credentials from a file: the hint follows; disabled, live keys are refused again.
      const rolledFile = path.join(storage!.dataDir, 'stripe-credentials.json');
      writeFileSync(rolledFile, JSON.stringify(stripeLiveRolled), { mode: 0o600 });
      const rekeyed = await runCli(
        ['merchants', 'processor-account-update', stripeAccount.id, '--credentials-file', rolledFile],
        cliEnv,
      );
      assert.equal(rekeyed.code, 0, rekeyed.stderr);
      assertNoSecret(rekeyed.stdout + rekeyed.stderr);
      assert.equal((JSON.parse(rekeyed.stdout) as Account).credentialsHint, '…AbCd');
      const disabled = await runCli(
        ['merchants', 'processor-account-update', stripeAccount.id, '--status', 'disabled'],
        cliEnv,
      );
      assert.equal(disabled.code, 0, disabled.stderr);
      assert.equal((JSON.parse(disabled.stdout) as Account).status, 'disabled');
      const refused = await runCli(['merchants', 'roll-keys', merchantId, '--mode', 'live'], cliEnv);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /no_live_processor/);
    });

    test('credentials on the command line, unreadable or malformed are refused without repeating them', async () => {
      const inArgv = await runCli(
        [
          'merchants',
          'connect-processor',
          merchantId,
          '--processor',
          'stripe',
          '--mode',
          'live',
          `--credentials=${JSON.stringify(stripeLive)}`,
        ],
        cliEnv,
      );
      assert.equal(inArgv.code, 1);
      assert.match(inArgv.stderr, /never from the command line/);
      assertNoSecret(inArgv.stdout + inArgv.stderr);

      const notJson = await runCli(
        [
          'merchants',
          'connect-processor',
          merchantId,
          '--processor',
          'stripe',
          '--mode',
          'test',
          '--credentials-file',
          '-',
        ],
        cliEnv,
        `secretKey=${stripeLive.secretKey}`,
      );
      assert.equal(notJson.code, 1);
      assert.match(notJson.stderr, /--credentials-file: stdin is not JSON/);
      assertNoSecret(notJson.stdout + notJson.stderr);

      const missing = await runCli(
        ['merchants', 'connect-processor', merchantId, '--processor', 'stripe', '--mode', 'test'],
        cliEnv,
      );
      assert.equal(missing.code, 1);
      assert.match(missing.stderr, /needs --credentials-file/);

      // The service's own check: a live key for a test account names the field, not the value.
      const wrongMode = await runCli(
        [
          'merchants',
          'connect-processor',
          merchantId,
          '--processor',
          'stripe',
          '--mode',
          'test',
          '--credentials-file',
          '-',
        ],
        cliEnv,
        JSON.stringify(stripeLive),
      );
      assert.equal(wrongMode.code, 1);
      assert.match(wrongMode.stderr, /credentials\.secretKey/);
      assertNoSecret(wrongMode.stdout + wrongMode.stderr);

      const unknown = await runCli(
        [
          'merchants',
          'connect-processor',
          merchantId,
          '--processor',
          'paypal',
          '--mode',
          'test',
          '--credentials-file',
          '-',
        ],
        cliEnv,
        JSON.stringify(stripeLive),
      );
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr, /processor must be one of adyen, stripe/);

      // Nothing half-written: the merchant still has only the accounts of the first test (or none).
      const listed = await runCli(['merchants', 'processor-accounts', merchantId, '--json'], cliEnv);
      const modes = (JSON.parse(listed.stdout) as { data: Account[] }).data.filter((a) => a.mode === 'test');
      assert.ok(
        modes.every((account) => account.processor === 'adyen'),
        listed.stdout,
      );
    });
  },
);
