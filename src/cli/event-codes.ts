import { ConfigError } from '../config-rules.js';
import type { EventType } from '../events/schemas.js';
import { exactEventCode, resolveEventCode, unknownEventCodeHint } from '../events/event-types.js';

/**
 * An event code given on the command line (docs/webhooks.md). Where the API takes the code too
 * (`webhooks update --events`, `events list --type`, `listen --events`) it is taken as the API
 * takes it, by either name in any letter case (`Payment.Succeeded`), and sent as docs/webhooks.md#event-codes writes
 * it; `trigger` (`exact`), which makes the event it names, takes either name only as written.
 * Anything else is refused with a "did you mean" (`payment.faild` → `payment.failed`).
 * `what` names the argument in the message (`trigger`, `--type`, `--events`).
 */
export function cliEventCode(what: string, name: string, { exact = false } = {}): EventType {
  const code = exact ? exactEventCode(name) : resolveEventCode(name);
  if (code === undefined)
    throw new ConfigError(`${what}: '${name}' is not an event code; ${unknownEventCodeHint(name)}`);
  return code;
}
