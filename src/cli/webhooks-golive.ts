import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { ConfigError } from '../config-rules.js';
import { merchantCall } from './client.js';

/**
 * `tessera webhooks check|doctor|fast-forward`: the go-live tools of issue 12, through the merchant
 * API of a running service with the merchant's private key.
 */
export const goLiveUsage = `  webhooks check ID [--check-url URL]
                                 the go-live check: test deliveries to the endpoint (or URL; required for
                                 the dynamic endpoint), one line per case; exit code 0 only if all pass
  webhooks doctor --headers h.txt --body body.json [--token T] [--endpoint we_…]
                                 why a received notification's signature does not verify (headers as raw
                                 text, the body as received); exit code 0 only if it verifies`;

export const goLiveActions = ['check', 'doctor'] as const;

const options = {
  url: { type: 'string' },
  key: { type: 'string' },
} as const;

interface CheckCase {
  name: string;
  passed: boolean;
  reason: string;
}

async function check(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { ...options, 'check-url': { type: 'string' } },
  });
  const id = positionals[0];
  if (!id) throw new ConfigError('webhooks check needs the endpoint id (we_…)');
  const body = values['check-url'] === undefined ? {} : { url: values['check-url'] };
  const result = (await merchantCall(values, 'POST', `/webhook_endpoints/${encodeURIComponent(id)}/check`, body)) as {
    id: string;
    url: string;
    passed: boolean;
    cases: CheckCase[];
    sendingAddresses?: { fixed: boolean; addresses: string[]; message: string };
  };
  const width = Math.max(...result.cases.map((item) => item.name.length));
  const lines = result.cases.map((item) => `${item.passed ? '✓' : '✗'} ${item.name.padEnd(width)}  ${item.reason}`);
  const verdict = result.passed ? 'passed: ready to go live' : 'failed';
  // docs/webhooks.md#sending-addresses-allow-lists: what a merchant behind an IP allow-list must let in, with the verdict.
  const sending = result.sendingAddresses;
  const addresses = sending
    ? `${sending.fixed ? `Sending addresses: ${sending.addresses.join(', ')}\n` : ''}${sending.message}\n`
    : '';
  process.stdout.write(`Check ${result.id} of ${result.url}\n${lines.join('\n')}\n${verdict}\n${addresses}`);
  return result.passed ? 0 : 1;
}

const marks: Record<string, string> = { ok: '✓', problem: '✗', warning: '!', info: 'i' };

async function readInput(file: string | undefined, flag: string): Promise<string> {
  if (!file) throw new ConfigError(`webhooks doctor needs --${flag} FILE`);
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`Cannot read --${flag} ${file}: ${(err as Error).message}`);
  }
}

async function doctor(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      ...options,
      headers: { type: 'string' },
      body: { type: 'string' },
      token: { type: 'string' },
      endpoint: { type: 'string' },
    },
  });
  // The body file is sent byte for byte: an editor's trailing newline is a change the doctor reports.
  const input = {
    headers: await readInput(values.headers, 'headers'),
    body: await readInput(values.body, 'body'),
    token: values.token,
    endpointId: values.endpoint,
  };
  const report = (await merchantCall(values, 'POST', '/webhooks/doctor', input)) as {
    verifies: boolean;
    findings: Array<{ code: string; severity: string; message: string }>;
  };
  const lines = report.findings.map((item) => `${marks[item.severity] ?? '-'} ${item.code}: ${item.message}`);
  process.stdout.write(`${lines.join('\n')}\n${report.verifies ? 'verifies' : 'does not verify'}\n`);
  return report.verifies ? 0 : 1;
}

export async function goLiveCommand(argv: string[]): Promise<number> {
  const [action, ...rest] = argv;
  if (action === 'check') return check(rest);
  if (action === 'doctor') return doctor(rest);
  throw new ConfigError(`Unknown webhooks action '${action}'\n\n${goLiveUsage}`);
}
