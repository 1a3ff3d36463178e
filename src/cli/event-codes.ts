import { ConfigError } from '../config-rules.js';
import type { EventType } from '../events/schemas.js';
import { exactEventCode, unknownEventCodeHint } from '../webhooks/event-types.js';

/**
 * An event code given on the command line (DESIGN §12), by either of its names, as SPEC §6.2
 * writes it; anything else is refused with a "did you mean" (`invoice.sent` → `Invoice.sent`).
 * `what` names the argument in the message (`trigger`, `--type`, `--events`).
 */
export function cliEventCode(what: string, name: string): EventType {
  const code = exactEventCode(name);
  if (code === undefined)
    throw new ConfigError(`${what}: '${name}' is not an event code; ${unknownEventCodeHint(name)}`);
  return code;
}
