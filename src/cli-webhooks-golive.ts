import { parseArgs } from 'node:util';
import { ConfigError } from './config.js';
import { merchantCall } from './cli-webhooks.js';

/**
 * `tessera webhooks check|doctor|fast-forward`: the go-live tools of issue 12, through the merchant
 * API of a running service with the merchant's private key.
 */
export const goLiveUsage = `  webhooks check ID [--check-url URL]
                                 the go-live check: test deliveries to the endpoint (or URL; required for
                                 the dynamic endpoint), one line per case; exit code 0 only if all pass`;

export const goLiveActions = ['check'] as const;

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
  };
  const width = Math.max(...result.cases.map((item) => item.name.length));
  const lines = result.cases.map((item) => `${item.passed ? '✓' : '✗'} ${item.name.padEnd(width)}  ${item.reason}`);
  const verdict = result.passed ? 'passed: ready to go live' : 'failed';
  process.stdout.write(`Check ${result.id} of ${result.url}\n${lines.join('\n')}\n${verdict}\n`);
  return result.passed ? 0 : 1;
}

export async function goLiveCommand(argv: string[]): Promise<number> {
  const [action, ...rest] = argv;
  if (action === 'check') return check(rest);
  throw new ConfigError(`Unknown webhooks action '${action}'\n\n${goLiveUsage}`);
}
