import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';

/*
 * SSRF protection for webhook URLs (issue 3, docs/webhooks.md#endpoints-and-tokens). In production a webhook may only reach
 * public unicast addresses: a merchant (or whoever holds its API key) must not be able to make
 * Tessera POST to its own loopback, the private network it runs in, or the cloud metadata service.
 * The check here runs when a URL is saved; the delivery client checks the address it actually
 * connects to with isForbiddenAddress, so that a DNS answer that changes later (rebinding) gains
 * nothing.
 */

/** Why an address is refused; null from classifyAddress means a public unicast address. */
export type ForbiddenAddressKind =
  | 'invalid'
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'shared (carrier-grade NAT)'
  | 'link-local'
  | 'cloud metadata'
  | 'multicast'
  | 'broadcast'
  | 'documentation'
  | 'reserved';

/** True when a webhook must not be sent to `ip` in production (text that is not an IP included). */
export function isForbiddenAddress(ip: string): boolean {
  return classifyAddress(ip) !== null;
}

/**
 * Which non-public addresses webhooks may reach (docs/security.md, "Private addresses"). In
 * production none. Elsewhere loopback (a receiver on the developer's machine, in every spelling:
 * `127.0.0.1`, `2130706433`, `::ffff:127.0.0.1`), and with `allowPrivate`
 * (TESSERA_WEBHOOK_ALLOW_PRIVATE=on) every other private range too. Cloud metadata and link-local
 * addresses never: a deployment that forgot NODE_ENV=production must not hand a merchant the
 * instance's credentials.
 */
export interface AddressPolicy {
  production: boolean;
  allowPrivate?: boolean;
}

const neverReached: ReadonlySet<ForbiddenAddressKind> = new Set(['cloud metadata', 'link-local', 'invalid']);

/** The kind of address `ip` is when the policy refuses it, else null. */
export function refusedAddressKind(ip: string, policy: AddressPolicy): ForbiddenAddressKind | null {
  const kind = classifyAddress(ip);
  if (kind === null) return null;
  if (policy.production || neverReached.has(kind)) return kind;
  return kind === 'loopback' || policy.allowPrivate === true ? null : kind;
}

/**
 * The kind of non-public address `ip` is, or null for a public unicast address. IPv6 forms that
 * carry an IPv4 address a packet would reach (IPv4-mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::/96`,
 * 6to4 `2002::/16`) are judged by that IPv4 address.
 */
export function classifyAddress(ip: string): ForbiddenAddressKind | null {
  const text = ip.trim();
  const family = isIP(stripZone(text));
  if (family === 4) {
    const address = parseIpv4(text);
    return address === null ? 'invalid' : classifyIpv4(address);
  }
  if (family === 6) {
    const groups = parseIpv6(stripZone(text));
    return groups === null ? 'invalid' : classifyIpv6(groups);
  }
  return 'invalid';
}

export type UrlCheck =
  | { ok: true }
  | {
      ok: false;
      message: string;
      reason: 'invalid' | 'credentials' | 'forbidden_address' | 'host_not_allowed';
      /** For the server log only: why a host name was refused, which the message does not tell. */
      detail?: string;
    };

export interface UrlCheckOptions extends AddressPolicy {
  /** NODE_ENV=production: the host must resolve to public addresses only. */
  production: boolean;
  /** Resolves a host name to its addresses; DNS by default, injected by tests. */
  lookup?: (hostname: string) => Promise<string[]>;
  lookupTimeoutMs?: number;
  /** The request field the URL came from, named in the messages (`url` by default). */
  field?: string;
}

/**
 * Whether `url` may be a webhook endpoint: http or https, no user name or password (a secret in a
 * URL ends up in logs and dashboards), and in production a host that is not localhost and whose
 * every address is public. Messages name the field and the reason but never the resolved address,
 * which would tell a caller how Tessera's own network resolves names.
 */
export async function checkWebhookUrl(url: string, options: UrlCheckOptions): Promise<UrlCheck> {
  const field = options.field ?? 'url';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, reason: 'invalid', message: `${field} is not a valid URL` };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return { ok: false, reason: 'invalid', message: `${field} must be an http or https URL` };
  }
  if (parsed.username !== '' || parsed.password !== '') {
    return { ok: false, reason: 'credentials', message: `${field} must not contain a user name or password` };
  }
  // The WHATWG parser has already turned forms like http://2130706433/ and http://0x7f.1/ into
  // 127.0.0.1, as the HTTP client will; IPv6 hosts come in brackets.
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  if (host === '') return { ok: false, reason: 'invalid', message: `${field} must name a host` };
  if (isIP(stripZone(host)) !== 0) {
    const kind = refusedAddressKind(host, options);
    return kind === null ? { ok: true } : refused(`${field} is ${describe(kind)}`, options);
  }
  // Outside production a host name is not resolved here (a receiver named in /etc/hosts, a name
  // that resolves only later): the delivery client judges the address it connects to.
  if (!options.production) return { ok: true };

  // RFC 6761: localhost and every name under it are loopback, whatever a resolver says.
  const name = host.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) return refused(`${field} names localhost`, options);

  let addresses: string[];
  try {
    addresses = await withTimeout((options.lookup ?? resolveHost)(host), options.lookupTimeoutMs ?? 5000);
  } catch {
    addresses = [];
  }
  if (addresses.length === 0) return hostNotAllowed(field, 'the host name does not resolve');
  // Every address, not just the first: the HTTP client may connect to any of them.
  for (const address of addresses) {
    const kind = classifyAddress(address);
    if (kind !== null) return hostNotAllowed(field, `the host name resolves to ${describe(kind)}`);
  }
  return { ok: true };
}

/**
 * A host name that does not resolve and one that resolves to a private address get the same
 * answer, so that the answers cannot be used to learn which names Tessera's own network resolves
 * (internal DNS probing); the difference goes to the server log through `detail`.
 */
function hostNotAllowed(field: string, detail: string): UrlCheck {
  return {
    ok: false,
    reason: 'host_not_allowed',
    message: `${field} must have a host name that resolves to public addresses only, as required in production`,
    detail,
  };
}

/** Every address of a host name, IPv4 and IPv6, as the system resolver answers them. */
export async function resolveHost(hostname: string): Promise<string[]> {
  const answers = await dnsLookup(hostname, { all: true, verbatim: true });
  return answers.map((answer) => answer.address);
}

function refused(what: string, policy: AddressPolicy): UrlCheck {
  if (policy.production) {
    return { ok: false, reason: 'forbidden_address', message: `${what}, which is not allowed in production` };
  }
  return {
    ok: false,
    reason: 'forbidden_address',
    message: /cloud metadata|link-local|not a valid/.test(what)
      ? `${what}, which webhooks may never reach`
      : `${what}, which webhooks may reach outside production only with TESSERA_WEBHOOK_ALLOW_PRIVATE=on`,
  };
}

function describe(kind: ForbiddenAddressKind): string {
  if (kind === 'invalid') return 'not a valid address';
  return `${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind} address`;
}

async function withTimeout<T>(promise: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => reject(new Error('lookup timed out')), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function stripZone(ip: string): string {
  const percent = ip.indexOf('%');
  return percent === -1 ? ip : ip.slice(0, percent);
}

/** Dotted-quad IPv4 to an unsigned 32-bit number; null unless exactly four decimal parts of 0–255. */
function parseIpv4(text: string): number | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let value = 0;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part) || Number(part) > 255) return null;
    value = value * 256 + Number(part);
  }
  return value;
}

/** IPv6 text (compressed, with or without a trailing dotted IPv4) to its eight 16-bit groups. */
function parseIpv6(text: string): number[] | null {
  let source = text.toLowerCase();
  const lastColon = source.lastIndexOf(':');
  const tail = source.slice(lastColon + 1);
  if (tail.includes('.')) {
    const ipv4 = parseIpv4(tail);
    if (ipv4 === null) return null;
    source = `${source.slice(0, lastColon + 1)}${(ipv4 >>> 16).toString(16)}:${(ipv4 & 0xffff).toString(16)}`;
  }
  const halves = source.split('::');
  if (halves.length > 2) return null;
  const split = (half: string | undefined) => (half ? half.split(':') : []);
  const head = split(halves[0]);
  const rest = split(halves[1]);
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const parts = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...rest];
  const groups: number[] = [];
  for (const part of parts) {
    if (!/^[0-9a-f]{1,4}$/.test(part)) return null;
    groups.push(parseInt(part, 16));
  }
  return groups;
}

/** [first address, prefix length, kind], most specific first where ranges nest. */
const ipv4Ranges: Array<[string, number, ForbiddenAddressKind]> = [
  ['169.254.169.254', 32, 'cloud metadata'], // AWS, GCP, Azure, OpenStack
  ['255.255.255.255', 32, 'broadcast'],
  ['0.0.0.0', 8, 'unspecified'], // "this network"
  ['10.0.0.0', 8, 'private'],
  ['100.100.100.200', 32, 'cloud metadata'], // Alibaba Cloud
  ['100.64.0.0', 10, 'shared (carrier-grade NAT)'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'], // IETF protocol assignments; includes Oracle Cloud metadata 192.0.0.192
  ['192.0.2.0', 24, 'documentation'],
  ['192.88.99.0', 24, 'reserved'], // former 6to4 relay anycast
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'reserved'], // benchmarking
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];

const ipv4Table = ipv4Ranges.map(([first, prefixLength, kind]) => {
  const mask = prefixLength === 0 ? 0 : (0xffffffff << (32 - prefixLength)) >>> 0;
  return { network: ((parseIpv4(first) ?? 0) & mask) >>> 0, mask, kind };
});

function classifyIpv4(address: number): ForbiddenAddressKind | null {
  for (const range of ipv4Table) if ((address & range.mask) >>> 0 === range.network) return range.kind;
  return null;
}

function classifyIpv6(g: number[]): ForbiddenAddressKind | null {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const embeddedIpv4 = (high: number, low: number) => classifyIpv4(((high << 16) | low) >>> 0);
  const firstFiveZero = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (firstFiveZero && g5 === 0 && g6 === 0) {
    if (g7 === 0) return 'unspecified';
    if (g7 === 1) return 'loopback';
  }
  // ::ffff:a.b.c.d reaches a.b.c.d: judged as IPv4 so that ::ffff:127.0.0.1 is loopback.
  if (firstFiveZero && g5 === 0xffff) return embeddedIpv4(g6, g7);
  // ::a.b.c.d (IPv4-compatible, deprecated) and ::ffff:0:a.b.c.d (SIIT) have no public use.
  if (firstFiveZero) return 'reserved';
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0xffff && g5 === 0) return 'reserved';
  // NAT64 (RFC 6052) translates to the embedded IPv4 address.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return embeddedIpv4(g6, g7);
  if (g0 === 0x64 && g1 === 0xff9b) return 'private'; // 64:ff9b:1::/48, local-use NAT64
  // 6to4 tunnels to the IPv4 address in the second and third groups.
  if (g0 === 0x2002) return embeddedIpv4(g1, g2);
  if (g0 === 0xfd00 && g1 === 0x0ec2 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0 && g6 === 0 && g7 === 0x254) {
    return 'cloud metadata'; // AWS over IPv6
  }
  if ((g0 & 0xfe00) === 0xfc00) return 'private'; // fc00::/7 unique local
  if ((g0 & 0xffc0) === 0xfe80) return 'link-local';
  if ((g0 & 0xffc0) === 0xfec0) return 'private'; // deprecated site-local
  if ((g0 & 0xff00) === 0xff00) return 'multicast';
  if (g0 === 0x2001 && g1 === 0x0db8) return 'documentation';
  if (g0 === 0x2001 && g1 === 0) return 'reserved'; // Teredo: the real peer is hidden
  if (g0 === 0x0100 && g1 === 0 && g2 === 0 && g3 === 0) return 'reserved'; // discard-only
  // Outside 2000::/3 nothing is allocated for global unicast.
  if ((g0 & 0xe000) !== 0x2000) return 'reserved';
  return null;
}
