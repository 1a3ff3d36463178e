import { parseArgs } from 'node:util';
import { ConfigError } from '../config-rules.js';
import { operatorCall } from './client.js';
import { painter, printJson, table } from './output.js';
import { processorAccountActions, processorAccountsCommand, processorAccountsUsage } from './processor-accounts.js';

/**
 * `tessera merchants …`: the operator's merchants through the operator API of a running service
 * (so it works whether that runs on PGlite or PostgreSQL). `list` prints a table, `--json` the
 * API's objects; the other actions print the merchant as JSON (create shows its keys once).
 */
export const merchantsUsage = `  merchants create --name N [--tokenization] [--mit] [--owner-email E]
  merchants update ID [--name N] [--tokenization true|false] [--mit true|false]
  merchants list [--json]        the merchants with their capabilities (a table; --json for scripts)
  merchants roll-keys ID [--mode test|live]
                                 new keys of that mode (test by default; live needs an enabled live
                                 processor account); the old ones of that mode stop working at once
${processorAccountsUsage}`;

interface Merchant {
  id: string;
  name: string;
  tokenization: boolean;
  mit: boolean;
  created: string;
}

export const operatorOptions = {
  url: { type: 'string' },
  'admin-key': { type: 'string' },
} as const;

const colors = painter();

function parseFlag(value: string | undefined, name: string): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === 'true' || value === 'on') return true;
  if (value === 'false' || value === 'off') return false;
  throw new ConfigError(`--${name} takes true or false`);
}

async function list(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { ...operatorOptions, json: { type: 'boolean' } } });
  const page = (await operatorCall(values, 'GET', '/merchants')) as { data: Merchant[]; hasMore: boolean };
  if (values.json) return printJson(page);
  if (page.data.length === 0) {
    process.stdout.write('No merchants: tessera merchants create --name N\n');
    return 0;
  }
  const yesNo = (on: boolean) => (on ? 'on' : 'off');
  const rows = page.data.map((merchant) => [
    merchant.id,
    merchant.name,
    yesNo(merchant.tokenization),
    yesNo(merchant.mit),
    merchant.created,
  ]);
  const onOff = (row: number, text: string) => (text.trim() === 'on' ? colors.green(text) : colors.dim(text));
  process.stdout.write(
    `${table(['ID', 'NAME', 'TOKENIZATION', 'MIT', 'CREATED'], rows, [
      undefined,
      undefined,
      onOff,
      onOff,
      (_row, text) => colors.dim(text),
    ])}\n`,
  );
  return 0;
}

export async function merchantsCommand(argv: string[]): Promise<number> {
  const [action, ...rest] = argv;
  if (action === 'create') {
    const { values } = parseArgs({
      args: rest,
      options: {
        ...operatorOptions,
        name: { type: 'string' },
        tokenization: { type: 'boolean' },
        mit: { type: 'boolean' },
        'owner-email': { type: 'string' },
      },
    });
    if (!values.name) throw new ConfigError('merchants create needs --name');
    return printJson(
      await operatorCall(values, 'POST', '/merchants/create', {
        name: values.name,
        tokenization: values.tokenization ?? false,
        mit: values.mit ?? false,
        ...(values['owner-email'] ? { ownerEmail: values['owner-email'] } : {}),
      }),
    );
  }
  if (action === 'update') {
    const { values, positionals } = parseArgs({
      args: rest,
      allowPositionals: true,
      options: {
        ...operatorOptions,
        name: { type: 'string' },
        tokenization: { type: 'string' },
        mit: { type: 'string' },
      },
    });
    const id = positionals[0];
    if (!id) throw new ConfigError('merchants update needs the merchant id');
    return printJson(
      await operatorCall(values, 'POST', `/merchants/${encodeURIComponent(id)}/update`, {
        name: values.name,
        tokenization: parseFlag(values.tokenization, 'tokenization'),
        mit: parseFlag(values.mit, 'mit'),
      }),
    );
  }
  if (action === 'list') return list(rest);
  if (action === 'roll-keys') {
    const { values, positionals } = parseArgs({
      args: rest,
      allowPositionals: true,
      options: { ...operatorOptions, mode: { type: 'string' } },
    });
    const id = positionals[0];
    if (!id) throw new ConfigError('merchants roll-keys needs the merchant id');
    return printJson(
      await operatorCall(
        values,
        'POST',
        `/merchants/${encodeURIComponent(id)}/roll_keys`,
        values.mode === undefined ? {} : { mode: values.mode },
      ),
    );
  }
  if ((processorAccountActions as readonly string[]).includes(action ?? '')) {
    return processorAccountsCommand(action!, rest);
  }
  throw new ConfigError(
    `merchants takes create, update, list, roll-keys, ${processorAccountActions.join(', ')}\n\n${merchantsUsage}`,
  );
}

/**
 * `tessera dashboard-link`: a fresh one-time sign-in link for the sandbox merchant's Owner (outside
 * production), as `tessera start` prints one, so that a used link needs no restart.
 */
export async function dashboardLinkCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: operatorOptions });
  const link = (await operatorCall(values, 'POST', '/sandbox/dashboard_link', {})) as {
    merchantId: string;
    url: string;
  };
  process.stdout.write(
    `${link.url}\n  (one-time sign-in as the Owner of sandbox merchant ${link.merchantId}, valid 72 h)\n`,
  );
  return 0;
}
