import { parseArgs } from 'node:util';
import { ConfigError } from '../config-rules.js';
import { operatorCall } from './client.js';
import { operatorOptions } from './merchants.js';
import { painter, printJson, table } from './output.js';

/**
 * `tessera audit card-numbers`: the stored free text that holds a card number, masked, per merchant
 * (docs/security.md). Exits 1 when anything is found, so that a scheduled run can alert.
 */
export const auditUsage = `  audit card-numbers [--json]   stored free text (descriptions, names, notes, metadata…) that holds a
                                 card number, masked to its last four digits, per merchant; exits 1 on any`;

interface Finding {
  merchantId: string;
  mode: string;
  object: string;
  id: string;
  field: string;
  masked: string;
}

const colors = painter();

export async function auditCommand(argv: string[]): Promise<number> {
  const [action, ...rest] = argv;
  if (action !== 'card-numbers') throw new ConfigError(`audit takes card-numbers\n\n${auditUsage}`);
  const { values } = parseArgs({ args: rest, options: { ...operatorOptions, json: { type: 'boolean' } } });
  const answer = (await operatorCall(values, 'GET', '/audit/card_numbers')) as { data: Finding[]; truncated: boolean };
  const found = answer.data.length > 0 ? 1 : 0;
  if (values.json) {
    printJson(answer);
    return found;
  }
  if (answer.data.length === 0) {
    process.stdout.write('No card numbers in stored free text.\n');
    return 0;
  }
  const byMerchant = new Map<string, Finding[]>();
  for (const finding of answer.data) {
    byMerchant.set(finding.merchantId, [...(byMerchant.get(finding.merchantId) ?? []), finding]);
  }
  for (const [merchantId, findings] of byMerchant) {
    process.stdout.write(`${colors.bold(merchantId)}: ${findings.length} value${findings.length === 1 ? '' : 's'}\n`);
    const rows = findings.map((finding) => [finding.mode, finding.object, finding.id, finding.field, finding.masked]);
    process.stdout.write(`${table(['MODE', 'OBJECT', 'ID', 'FIELD', 'TEXT'], rows)}\n\n`);
  }
  if (answer.truncated) {
    process.stdout.write(colors.yellow('More rows than shown: clean these and run the audit again.\n'));
  }
  return found;
}
