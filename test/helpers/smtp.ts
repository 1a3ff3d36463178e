/**
 * A real SMTP server for tests (the smtp-server package) on 127.0.0.1, port 0: it checks the
 * credentials the service logs in with, keeps every message exactly as received, and can be told
 * to refuse messages. Never a mock transport: what the service sends crosses a real SMTP session.
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  /** The message as received (RFC 5322: headers, blank line, body). */
  raw: string;
}

export interface SmtpTestServer {
  /** smtp://user:password@127.0.0.1:port, as TESSERA_SMTP_URL. */
  readonly url: string;
  readonly messages: ReceivedMail[];
  /** Answers the next messages with a permanent failure (554) while on. */
  refuse(on: boolean): void;
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

export async function startSmtpServer(
  credentials = { user: 'tessera', password: 's3cret-smtp' },
): Promise<SmtpTestServer> {
  const messages: ReceivedMail[] = [];
  const waiters: Array<() => void> = [];
  let refusing = false;
  const server = new SMTPServer({
    // Plain SMTP on loopback: no STARTTLS offered, so no test certificate is involved.
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === credentials.user && auth.password === credentials.password) {
        callback(null, { user: auth.username });
      } else {
        callback(new Error('Invalid username or password'));
      }
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (refusing) {
          const error = Object.assign(new Error('Message refused by the test server'), { responseCode: 554 });
          callback(error);
          return;
        }
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        messages.push({
          from,
          to: session.envelope.rcptTo.map((recipient) => recipient.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        for (const wake of waiters.splice(0)) wake();
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://${credentials.user}:${credentials.password}@127.0.0.1:${port}`,
    messages,
    refuse(on) {
      refusing = on;
    },
    async waitFor(count, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      while (messages.length < count) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`expected ${count} e-mails, received ${messages.length}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return messages;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A header of a raw message (unfolded), or undefined. */
export function mailHeader(raw: string, name: string): string | undefined {
  const head = raw.split(/\r?\n\r?\n/, 1)[0] ?? '';
  const unfolded = head.replace(/\r?\n[ \t]+/g, ' ');
  const line = unfolded
    .split(/\r?\n/)
    .find((candidate) => candidate.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  return line?.slice(name.length + 1).trim();
}

/**
 * The text/plain part (or another, by its content type) of a raw message, decoded
 * (quoted-printable or base64), so that a test can read a long link that the encoding wrapped.
 */
export function mailText(raw: string, contentType: 'text/plain' | 'text/html' = 'text/plain'): string {
  const parts = raw.split(/\r?\n--[^\r\n]+\r?\n/);
  const part = parts.find((candidate) => new RegExp(`content-type:\\s*${contentType}`, 'i').test(candidate)) ?? raw;
  const [head = '', ...rest] = part.split(/\r?\n\r?\n/);
  const body = rest.join('\n\n');
  if (/content-transfer-encoding:\s*base64/i.test(head))
    return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (/content-transfer-encoding:\s*quoted-printable/i.test(head)) {
    const bytes = body
      .replace(/=\r?\n/g, '')
      .replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    return Buffer.from(bytes, 'latin1').toString('utf8');
  }
  return body;
}
