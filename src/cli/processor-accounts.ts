import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { ConfigError } from '../config-rules.js';
import { operatorCall } from './client.js';
import { painter, printJson, table } from './output.js';

/**
 * `tessera merchants processor-accounts|connect-processor|processor-account-update`: a merchant's
 * processor accounts through the operator API (docs/processors.md). Credentials are read from a
 * file or stdin, never from the command line (which `ps` shows to every user of the machine), and
 * never printed: the API answers only their hint.
 */
export const processorAccountsUsage = `  merchants processor-accounts ID [--json]
                                 the merchant's processor accounts (a table; --json for scripts)
  merchants connect-processor ID --processor adyen|stripe --mode test|live --credentials-file FILE [--base-url URL]
                                 connect a processor; FILE holds the credentials as JSON (- reads stdin)
  merchants processor-account-update PA_ID [--status enabled|disabled] [--credentials-file FILE] [--base-url URL]`;

export const processorAccountActions = ['processor-accounts', 'connect-processor', 'processor-account-update'] as const;

interface ProcessorAccount {
  id: string;
  processor: string;
  mode: string;
  status: string;
  credentialsHint: string;
  webhookUrl: string;
  lastNotificationAt: string | null;
}

const operatorOptions = { url: { type: 'string' }, 'admin-key': { type: 'string' } } as const;
const colors = painter();

/** A secret given on the command line is refused before anything is parsed or sent. */
function refuseCredentialsInArgv(argv: string[]): void {
  if (argv.some((arg) => /^--(credentials|api-key|secret-key|hmac-key|webhook-secret)(=|$)/.test(arg))) {
    throw new ConfigError(
      'credentials are read from a file (--credentials-file FILE) or stdin (--credentials-file -), never from the command line, where ps shows them',
    );
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The credentials as a JSON object of strings; an error never repeats what the file holds. */
async function readCredentials(file: string): Promise<Record<string, string>> {
  const where = file === '-' ? 'stdin' : file;
  let text: string;
  try {
    text = file === '-' ? await readStdin() : await readFile(file, 'utf8');
  } catch (err) {
    throw new ConfigError(
      `--credentials-file: cannot read ${where} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ConfigError(`--credentials-file: ${where} is not JSON (an object such as {"secretKey": "…", …})`);
  }
  if (
    typeof parsed !== 'object' ||
    parsed === null ||
    Array.isArray(parsed) ||
    Object.values(parsed).some((value) => typeof value !== 'string')
  ) {
    throw new ConfigError(`--credentials-file: ${where} must hold a JSON object of strings`);
  }
  return parsed as Record<string, string>;
}

async function list(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { ...operatorOptions, json: { type: 'boolean' } },
  });
  const id = positionals[0];
  if (!id) throw new ConfigError('merchants processor-accounts needs the merchant id');
  const page = (await operatorCall(values, 'GET', `/merchants/${encodeURIComponent(id)}/processor_accounts`)) as {
    data: ProcessorAccount[];
    hasMore: boolean;
  };
  if (values.json) return printJson(page);
  if (page.data.length === 0) {
    process.stdout.write(
      `No processor account: tessera merchants connect-processor ${id} --processor … --mode … --credentials-file FILE\n`,
    );
    return 0;
  }
  const rows = page.data.map((account) => [
    account.id,
    account.processor,
    account.mode,
    account.status,
    account.credentialsHint,
    account.lastNotificationAt ?? 'never',
    account.webhookUrl,
  ]);
  process.stdout.write(
    `${table(['ID', 'PROCESSOR', 'MODE', 'STATUS', 'CREDENTIALS', 'LAST NOTIFICATION', 'WEBHOOK URL'], rows, [
      undefined,
      undefined,
      undefined,
      (_row, text) => (text.trim() === 'enabled' ? colors.green(text) : colors.dim(text)),
      (_row, text) => colors.dim(text),
    ])}\n`,
  );
  return 0;
}

async function connect(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      ...operatorOptions,
      processor: { type: 'string' },
      mode: { type: 'string' },
      'credentials-file': { type: 'string' },
      'base-url': { type: 'string' },
    },
  });
  const id = positionals[0];
  if (!id) throw new ConfigError('merchants connect-processor needs the merchant id');
  if (!values.processor) throw new ConfigError('merchants connect-processor needs --processor adyen|stripe');
  if (!values.mode) throw new ConfigError('merchants connect-processor needs --mode test|live');
  if (!values['credentials-file']) {
    throw new ConfigError('merchants connect-processor needs --credentials-file FILE (JSON; - reads stdin)');
  }
  const credentials = await readCredentials(values['credentials-file']);
  return printJson(
    await operatorCall(values, 'POST', `/merchants/${encodeURIComponent(id)}/processor_accounts/create`, {
      processor: values.processor,
      mode: values.mode,
      credentials,
      ...(values['base-url'] === undefined ? {} : { baseUrl: values['base-url'] }),
    }),
  );
}

async function update(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      ...operatorOptions,
      status: { type: 'string' },
      'credentials-file': { type: 'string' },
      'base-url': { type: 'string' },
    },
  });
  const id = positionals[0];
  if (!id) throw new ConfigError('merchants processor-account-update needs the processor account id (pa_…)');
  const credentials =
    values['credentials-file'] === undefined ? undefined : await readCredentials(values['credentials-file']);
  return printJson(
    await operatorCall(values, 'POST', `/processor_accounts/${encodeURIComponent(id)}/update`, {
      ...(values.status === undefined ? {} : { status: values.status }),
      ...(credentials === undefined ? {} : { credentials }),
      ...(values['base-url'] === undefined ? {} : { baseUrl: values['base-url'] }),
    }),
  );
}

export async function processorAccountsCommand(action: string, argv: string[]): Promise<number> {
  refuseCredentialsInArgv(argv);
  if (action === 'processor-accounts') return list(argv);
  if (action === 'connect-processor') return connect(argv);
  return update(argv);
}
