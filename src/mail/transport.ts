import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Transporter } from 'nodemailer';
import type { Clock } from '../clock.js';
import { randomHex } from '../ids.js';

/**
 * The one way the service sends e-mail (README.md#running-it, docs/architecture.md#the-folders): invoices now, the dashboard's
 * invitations and password resets later. Through SMTP when TESSERA_SMTP_URL is set; otherwise
 * every message is written as an .eml file into `<data folder>/mail/` (kept in memory when the
 * data folder is `memory://`), where a developer opens it with any mail program.
 *
 * Sending is slow and may fail, so callers send outside any database transaction: a message is
 * never held up by a lock, and a rolled-back change never depends on a message already sent.
 */

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  /** An HTML alternative of `text`, written with the one HTML kit (src/web/html.ts). */
  html?: string;
}

/** A message written instead of sent: its file (null in memory) and its full RFC 5322 text. */
export interface KeptMail {
  file: string | null;
  to: string;
  subject: string;
  raw: string;
}

/** Where messages go, for the start-up banner. Never holds the SMTP password. */
export type MailDestination = { kind: 'smtp'; server: string } | { kind: 'files'; folder: string } | { kind: 'memory' };

export interface MailTransport {
  readonly destination: MailDestination;
  /** Sends (or writes) one message; rejects when the SMTP server refuses it or cannot be reached. */
  send(message: MailMessage): Promise<{ messageId: string }>;
  /** The messages written instead of sent, oldest first, while this process runs (tests read them). */
  kept(): readonly KeptMail[];
  close(): void;
}

/** An SMTP server that does not answer within these times fails the send rather than holding a request. */
const smtpTimeouts = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 };

/** At most this many messages are kept in memory (development with `memory://`), the newest. */
const maxKeptMessages = 1000;

export function createMailTransport({
  smtpUrl,
  from,
  dataDir,
  clock,
}: {
  smtpUrl: string | undefined;
  from: string;
  dataDir: string;
  clock: Clock;
}): MailTransport {
  const kept: KeptMail[] = [];
  const inMemory = dataDir.startsWith('memory://');
  const folder = path.join(dataDir, 'mail');
  const destination: MailDestination = smtpUrl
    ? { kind: 'smtp', server: serverOf(smtpUrl) }
    : inMemory
      ? { kind: 'memory' }
      : { kind: 'files', folder };

  // nodemailer is loaded with the first message, not at every start: most starts send none, and its
  // import is a tenth of a start's CPU (docs/performance.md#test-suite-time). The SMTP URL was
  // checked with the configuration, so nothing that could fail a start waits until then.
  let transporter: Promise<Transporter> | undefined;
  const transporterOf = () =>
    (transporter ??= import('nodemailer').then(({ default: nodemailer }) =>
      smtpUrl
        ? nodemailer.createTransport({ url: smtpUrl, ...smtpTimeouts })
        : nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' }),
    ));

  async function keep(message: MailMessage, raw: string): Promise<void> {
    let file: string | null = null;
    if (!inMemory) {
      await mkdir(folder, { recursive: true, mode: 0o700 });
      // Sorted by time in a file listing; the random part keeps two messages of one millisecond apart.
      const stamp = clock.now().toISOString().replace(/[:.]/g, '-');
      file = path.join(folder, `${stamp}-${randomHex(4)}.eml`);
      // The message may hold a link that lets its reader pay (an invoice page): readable by the owner only.
      await writeFile(file, raw, { mode: 0o600 });
    }
    kept.push({ file, to: message.to, subject: message.subject, raw });
    if (kept.length > maxKeptMessages) kept.shift();
  }

  return {
    destination,
    async send(message) {
      const transport = await transporterOf();
      const info = (await transport.sendMail({
        from,
        to: message.to,
        subject: message.subject,
        text: message.text,
        html: message.html,
        date: clock.now(),
      })) as { messageId: string; message?: Buffer };
      if (!smtpUrl) await keep(message, info.message?.toString('utf8') ?? '');
      return { messageId: info.messageId };
    },
    kept: () => kept,
    close() {
      // A transporter that never loaded has nothing to close (its send already failed).
      void transporter?.then(
        (made) => made.close(),
        () => undefined,
      );
    },
  };
}

/** `smtp://user:secret@mail.example.com:587` → `smtp://mail.example.com:587`: the banner shows no password. */
function serverOf(smtpUrl: string): string {
  const url = new URL(smtpUrl);
  return `${url.protocol}//${url.host}`;
}
