// Searches every log line written by a test run for card data — the sandbox card numbers (whole,
// or with separators), a cardNo/securityCode field with a value — and for secrets left unmasked: a
// URL query parameter or a JSON field whose name contains secret, token, password, key, signature,
// authorization or cookie with a value other than [redacted] (src/redact.ts masks them; this check
// is written apart from that list on purpose), and the shapes of Tessera's own secrets (private
// keys, webhook endpoint tokens). Exits 1 naming the file, line and rule when anything is found;
// the line itself is not shown.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const dir = process.argv[2] ?? '.test-logs';
const cardNumbers = [
  '4242424242424242',
  '5555555555554444',
  '378282246310005',
  '3566002020360505',
  '6011111111111117',
  '4000000000000002',
  '4000000000000077',
  '4000000000009995',
  '4000000000000069',
  '4000000000000127',
  '4000002500003155',
  '4000000000000341',
  '4000000000000630',
  '4000000000000259',
  '4000000000004954',
];
const secretName =
  '(?:[^"=&?\\s]*?)(?:secret|token|passw(?:or)?d|key|signature|authorization|cookie|credential)[^"=&\\s]*';
const patterns = [
  ...cardNumbers.map((number) => new RegExp(number.split('').join('[ -]?'))),
  /"(cardNo|securityCode|card_number|security_code)"\s*:\s*"[^"[]/,
  // ?payment_client_secret=… or &token=… whose value is not the mask ([redacted], maybe %-escaped).
  new RegExp(`[?&]${secretName}=(?!\\[redacted\\]|%5Bredacted%5D)[^&"\\s]`, 'i'),
  // "authorization":"Bearer …", "webhookToken":"whsec_…" (a JSON field of the log line).
  new RegExp(`"${secretName}"\\s*:\\s*"(?!\\[redacted\\]")[^"]`, 'i'),
  /\b(?:test|live)_pr_[A-Za-z0-9]{8,}/,
  /\bwhsec_[A-Za-z0-9]{8,}/,
];
let files;
try {
  files = readdirSync(dir).filter((name) => name.endsWith('.log'));
} catch {
  console.error(`scan-logs: no log folder ${dir}`);
  process.exit(1);
}
let lines = 0;
let findings = 0;
for (const file of files) {
  const text = readFileSync(path.join(dir, file), 'utf8');
  text.split('\n').forEach((line, index) => {
    lines++;
    for (const pattern of patterns) {
      if (pattern.test(line)) {
        findings++;
        console.error(`${file}:${index + 1}: card data or a secret matched ${pattern} (line not shown)`);
      }
    }
  });
}
if (lines < 100) {
  console.error(`scan-logs: only ${lines} log lines in ${files.length} files; the tests did not log as expected`);
  process.exit(1);
}
console.log(`scan-logs: ${lines} log lines in ${files.length} files, ${findings} with card data or secrets`);
process.exit(findings > 0 ? 1 : 0);
