import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { manualClock } from '../src/clock.js';
import { loadConfig } from '../src/config.js';
import { ConfigError, defaultMailFrom } from '../src/config-rules.js';
import { createMailTransport } from '../src/mail/transport.js';
import { mailHeader, mailText, startSmtpServer, type SmtpTestServer } from './helpers/smtp.js';

const clock = manualClock(new Date('2026-11-22T12:00:00.000Z'));
const message = { to: 'ada@example.com', subject: 'Invoice ACME-0001 from Acme', text: 'Pay here: https://x.test/i' };

describe('mail transport', () => {
  let smtp: SmtpTestServer;
  let folder: string;
  before(async () => {
    smtp = await startSmtpServer();
    folder = mkdtempSync(path.join(tmpdir(), 'tessera-mail-'));
  });
  after(async () => {
    await smtp.close();
    rmSync(folder, { recursive: true, force: true });
  });

  test('with TESSERA_SMTP_URL a message crosses a real SMTP session, logged in with the URL credentials', async () => {
    const mail = createMailTransport({ smtpUrl: smtp.url, from: 'Acme <billing@acme.test>', dataDir: folder, clock });
    try {
      assert.deepEqual(mail.destination, { kind: 'smtp', server: `smtp://127.0.0.1:${new URL(smtp.url).port}` });
      assert.ok(!JSON.stringify(mail.destination).includes('s3cret'), 'the destination never shows the password');
      const { messageId } = await mail.send(message);
      const [received] = await smtp.waitFor(1);
      assert.ok(received);
      assert.deepEqual(received.to, ['ada@example.com']);
      assert.equal(received.from, 'billing@acme.test');
      assert.equal(mailHeader(received.raw, 'Message-ID'), messageId);
      assert.equal(mailHeader(received.raw, 'Date'), 'Sun, 22 Nov 2026 12:00:00 +0000', 'dated by the injected clock');
      assert.equal(mailText(received.raw).trim(), message.text);
      assert.deepEqual(mail.kept(), [], 'nothing is written when SMTP is used');
      assert.deepEqual(readdirSync(folder), []);
    } finally {
      mail.close();
    }
  });

  test('a wrong SMTP password fails the send', async () => {
    const wrong = new URL(smtp.url);
    wrong.password = 'wrong';
    const mail = createMailTransport({ smtpUrl: wrong.toString(), from: defaultMailFrom, dataDir: folder, clock });
    try {
      await assert.rejects(mail.send(message));
    } finally {
      mail.close();
    }
  });

  test('without SMTP each message is written as an .eml file into <data folder>/mail, readable by its owner only', async () => {
    const mail = createMailTransport({ smtpUrl: undefined, from: defaultMailFrom, dataDir: folder, clock });
    assert.deepEqual(mail.destination, { kind: 'files', folder: path.join(folder, 'mail') });
    await mail.send(message);
    await mail.send({ ...message, subject: 'Second' });
    const files = readdirSync(path.join(folder, 'mail')).sort();
    assert.equal(files.length, 2);
    for (const file of files) assert.match(file, /^2026-11-22T12-00-00-000Z-[0-9a-f]{8}\.eml$/);
    const raw = readFileSync(path.join(folder, 'mail', files[0]!), 'utf8');
    assert.equal(mailHeader(raw, 'From'), defaultMailFrom);
    assert.equal(mailHeader(raw, 'To'), 'ada@example.com');
    assert.equal(statSync(path.join(folder, 'mail', files[0]!)).mode & 0o777, 0o600);
    assert.deepEqual(
      mail.kept().map((kept) => [kept.subject, kept.file !== null]),
      [
        [message.subject, true],
        ['Second', true],
      ],
    );
  });

  test('with a memory:// data folder messages are kept in memory only', async () => {
    const mail = createMailTransport({ smtpUrl: undefined, from: defaultMailFrom, dataDir: 'memory://', clock });
    assert.deepEqual(mail.destination, { kind: 'memory' });
    await mail.send(message);
    const [kept] = mail.kept();
    assert.equal(kept?.file, null);
    assert.equal(mailHeader(kept!.raw, 'Subject'), message.subject);
    assert.equal(mailText(kept!.raw).trim(), message.text);
  });
});

describe('mail settings (README.md#running-it)', () => {
  test('TESSERA_SMTP_URL takes smtp:// and smtps:// URLs; anything else stops start-up naming it, never echoing it', () => {
    assert.equal(loadConfig({}).smtpUrl, undefined);
    assert.equal(
      loadConfig({ TESSERA_SMTP_URL: 'smtp://u:p@mail.example.com:587' }).smtpUrl,
      'smtp://u:p@mail.example.com:587',
    );
    assert.equal(loadConfig({ TESSERA_SMTP_URL: 'smtps://mail.example.com' }).smtpUrl, 'smtps://mail.example.com');
    assert.equal(loadConfig({}, ['--smtp-url', 'smtp://mail.example.com']).smtpUrl, 'smtp://mail.example.com');
    for (const bad of ['http://mail.example.com', 'mail.example.com:25', 'smtp://', 'smtp://:secretpw@']) {
      assert.throws(
        () => loadConfig({ TESSERA_SMTP_URL: bad }),
        (err: unknown) =>
          err instanceof ConfigError &&
          /TESSERA_SMTP_URL must be an smtp:\/\/ or smtps:\/\/ URL/.test(err.message) &&
          !err.message.includes('secretpw'),
        bad,
      );
    }
  });

  test('TESSERA_MAIL_FROM is an address or a name and an address; a line break or two addresses stop start-up', () => {
    assert.equal(loadConfig({}).mailFrom, 'Tessera <no-reply@localhost>');
    assert.equal(loadConfig({ TESSERA_MAIL_FROM: 'billing@acme.test' }).mailFrom, 'billing@acme.test');
    assert.equal(
      loadConfig({ TESSERA_MAIL_FROM: 'Acme Billing <billing@acme.test>' }).mailFrom,
      'Acme Billing <billing@acme.test>',
    );
    assert.equal(
      loadConfig({ TESSERA_MAIL_FROM: '"Acme, Inc." <billing@acme.test>' }).mailFrom,
      '"Acme, Inc." <billing@acme.test>',
    );
    assert.equal(loadConfig({}, ['--mail-from=billing@acme.test']).mailFrom, 'billing@acme.test');
    for (const bad of [
      'billing',
      'Acme <billing>',
      'a@b.test, c@d.test',
      'Acme <a@b.test>\nBcc: x@y.test',
      '<a@b.test> <c@d.test>',
    ]) {
      assert.throws(() => loadConfig({ TESSERA_MAIL_FROM: bad }), /TESSERA_MAIL_FROM must be an e-mail address/, bad);
    }
  });
});
