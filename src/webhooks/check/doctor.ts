import type { Clock } from '../../clock.js';
import type { Db } from '../../db/db.js';
import { canonicalJson } from '../../events/canonical-json.js';
import type { MerchantContext } from '../../core/merchant-context.js';
import { DomainError } from '../../core/errors.js';
import { isoTimestamp } from '../../time.js';
import * as queries from './queries.js';
import { endpointBodyOf } from '../../events/endpoint-body.js';
import type { DoctorBody, DoctorFinding, DoctorReport } from './doctor-schemas.js';
import { hasStandardHeaders, standardFindings } from './doctor-standard.js';
import { bodyChanged, findHeader, headerPairs, hmacHex, parsed, type Candidate, type Key } from './doctor-kit.js';
import type { WebhookEndpointService } from '../endpoints/service.js';

/*
 * The verification doctor (issue 12): given a notification as a merchant's receiver got it, says why
 * its signature does not verify. Every key is named by what it is (an endpoint id, "the legacy
 * key", "the token you gave"), never shown.
 */

/** docs/webhooks.md#what-is-sent: request-time within three minutes either way. */
const toleranceSeconds = 180;

export interface WebhookDoctorDeps {
  db: Db;
  clock: Clock;
  webhookEndpoints: Pick<WebhookEndpointService, 'retrieve' | 'decryptToken' | 'legacyKeyFor'>;
}

function report(findings: DoctorFinding[], timeRule: string): DoctorReport {
  const verifies = !findings.some((item) => item.severity === 'problem');
  if (verifies) {
    findings.unshift({
      code: 'verifies',
      severity: 'ok',
      message: `The signature verifies over the body as given, and ${timeRule}.`,
    });
  }
  return { verifies, findings };
}

export function createWebhookDoctor({ db, clock, webhookEndpoints }: WebhookDoctorDeps) {
  async function keysOf(merchant: MerchantContext, input: DoctorBody): Promise<Key[]> {
    const keys: Key[] = [];
    if (input.token !== undefined) keys.push({ label: 'the token you gave', kind: 'given', secret: input.token });
    for (const row of await queries.selectEndpointTokens(db, merchant.merchantId, merchant.mode)) {
      const secret = await webhookEndpoints.decryptToken(row.id, row.token_encrypted);
      keys.push({ label: `the token of endpoint ${row.id}`, kind: 'endpoint', endpointId: row.id, secret });
    }
    const legacy = await webhookEndpoints.legacyKeyFor(merchant.merchantId);
    keys.push({ label: "the merchant's legacy key", kind: 'legacy', secret: legacy });
    return keys;
  }

  /** The body as given, then what Tessera signed if the body's id is a stored event, then its re-encoding. */
  async function candidatesOf(merchant: MerchantContext, body: string): Promise<Candidate[]> {
    const list: Candidate[] = [{ label: 'the body as given', text: body }];
    const value = parsed(body) as { id?: unknown } | undefined;
    if (value && typeof value === 'object' && typeof value.id === 'string') {
      const event = await queries.selectEventBody(db, merchant.merchantId, merchant.mode, value.id);
      if (event) {
        list.push({
          label: `event ${value.id} as sent in the endpoint kind`,
          text: endpointBodyOf(event.body, event.type),
        });
        list.push({ label: `event ${value.id} as sent in the legacy kind`, text: event.body });
      }
    }
    if (value !== undefined) list.push({ label: 'the canonical encoding of the body', text: canonicalJson(value) });
    if (body.trim() !== body) list.push({ label: 'the body without surrounding white space', text: body.trim() });
    return list.filter((item, index) => index === 0 || item.text !== body);
  }

  function timeFindings(requestTime: string): DoctorFinding[] {
    const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})$/.exec(requestTime.trim());
    if (!match) {
      return [
        {
          code: 'malformed_request_time',
          severity: 'problem',
          message: `Request-Time ${JSON.stringify(requestTime)} is not yyyy-MM-dd'T'HH:mm:ss (UTC, docs/webhooks.md#what-is-sent)`,
        },
      ];
    }
    const sentAt = Date.UTC(+match[1]!, +match[2]! - 1, +match[3]!, +match[4]!, +match[5]!, +match[6]!);
    const skew = Math.round((clock.now().getTime() - sentAt) / 1000);
    if (Math.abs(skew) <= toleranceSeconds) return [];
    return [
      {
        code: 'clock_skew',
        severity: 'problem',
        message:
          `Request-Time is ${Math.abs(skew)} s ${skew > 0 ? 'behind' : 'ahead of'} Tessera's clock ` +
          `(${isoTimestamp(clock.now())}); docs/webhooks.md#what-is-sent accepts 3 minutes either way. Request-Time is UTC ` +
          'without a zone: parse it as UTC, keep the receiver clock synchronised (NTP), and if this request ' +
          'was captured a while ago, try a fresh one.',
      },
    ];
  }

  function signatureFindings(
    signature: string,
    requestTime: string,
    body: string,
    keys: Key[],
    candidates: Candidate[],
    intended: Key | undefined,
  ): DoctorFinding[] {
    if (!/^[0-9a-fA-F]{64}$/.test(signature.trim())) {
      return [{ code: 'malformed_signature', severity: 'problem', message: 'Signature is not 64 hex characters' }];
    }
    const wanted = signature.trim().toLowerCase();
    for (const candidate of candidates) {
      const key = keys.find((item) => hmacHex(item.secret, requestTime.trim(), candidate.text) === wanted);
      if (!key) continue;
      const findings: DoctorFinding[] = [];
      if (candidate.text !== body) findings.push(bodyChanged(body, candidate));
      if (key.kind === 'legacy') {
        findings.push({
          code: 'legacy_kind',
          severity: 'problem',
          message:
            "Signed with the merchant's legacy key: this is the legacy notification kind (type without " +
            '`endpoint_`, docs/webhooks.md#what-is-sent), sent only to endpoints with legacyNotifications on (off by default for ' +
            'endpoints created since it became opt-in). It never verifies with an endpoint token: acknowledge it ' +
            'with "success" without processing it, or switch legacyNotifications off.',
        });
      } else if (intended && key.secret !== intended.secret) {
        findings.push({
          code: 'wrong_token',
          severity: 'problem',
          message: `Signed with ${key.label}, not with ${intended.label}. Verify with the token of the endpoint that sent it.`,
        });
      }
      if (signature.trim() !== wanted) {
        findings.push({
          code: 'hex_case',
          severity: 'warning',
          message:
            'The Signature is upper-case hex: it matches only when compared without regard to case. A verifier ' +
            "that compares it with a lower-case HMAC (the provider's Java SDK, digest('hex')) fails: compare " +
            "without case, or set the endpoint's signatureCase to lower.",
        });
      }
      return findings;
    }
    const stored = candidates.find((item) => item.label.startsWith('event '));
    return [
      ...(stored ? [bodyChanged(body, stored)] : []),
      {
        code: 'no_key_matches',
        severity: 'problem',
        message:
          `The Signature matches none of ${keys.map((item) => item.label).join(', ')}, over ` +
          `${candidates.map((item) => item.label).join(', ')}. The token may have been rolled, the body changed ` +
          'beyond recognition, or the headers may belong to another request.',
      },
    ];
  }

  return {
    async diagnose(merchant: MerchantContext, input: DoctorBody): Promise<DoctorReport> {
      const findings: DoctorFinding[] = [];
      const keys = await keysOf(merchant, input);
      if (input.endpointId !== undefined) {
        await webhookEndpoints.retrieve(merchant, input.endpointId).catch(() => {
          throw new DomainError('resource_missing', 'No such webhook endpoint', { param: 'endpointId' });
        });
      }
      const intended: Key | undefined =
        keys.find((key) => key.kind === 'given') ??
        // Without endpointId no key is meant (the legacy key has no endpointId either).
        (input.endpointId === undefined ? undefined : keys.find((key) => key.endpointId === input.endpointId));
      const pairs = headerPairs(input.headers);
      if (hasStandardHeaders(pairs)) {
        // docs/webhooks.md#standard-webhooks-format: an endpoint in the standard format; the docs/webhooks.md#what-is-sent headers are not expected.
        const candidates = await candidatesOf(merchant, input.body);
        findings.push(...standardFindings({ pairs, body: input.body, keys, candidates, intended, now: clock.now() }));
        return report(findings, 'webhook-timestamp is within 5 minutes');
      }
      const found: Record<string, ReturnType<typeof findHeader>> = {};
      for (const name of ['Request-Time', 'Signature']) {
        const header = (found[name] = findHeader(pairs, name));
        if (!header) {
          findings.push({
            code: 'header_missing',
            severity: 'problem',
            message: `The ${name} header is missing (Tessera sends Content-Type, Request-Time and Signature).`,
          });
        } else if (!header.exact) {
          findings.push({
            code: 'header_case',
            severity: 'warning',
            message:
              `The header is named ${header.as}, not ${name}: readers that look headers up case-sensitively ` +
              "(the provider's PHP SDK reads Request-Time and Signature) do not find it. Read headers without " +
              'regard to case.',
          });
        }
      }
      const requestTime = found['Request-Time'];
      const signature = found.Signature;
      if (requestTime) findings.push(...timeFindings(requestTime.value));
      if (requestTime && signature) {
        const candidates = await candidatesOf(merchant, input.body);
        findings.push(...signatureFindings(signature.value, requestTime.value, input.body, keys, candidates, intended));
      }
      findings.push({
        code: 'rolled_tokens_not_kept',
        severity: 'info',
        message:
          'Tessera keeps no previous tokens after a roll (the old token stops working at once), so a signature ' +
          'made with a rolled token cannot be recognised: that check was skipped.',
      });
      return report(findings, 'Request-Time is within 3 minutes');
    },
  };
}

export type WebhookDoctor = ReturnType<typeof createWebhookDoctor>;
