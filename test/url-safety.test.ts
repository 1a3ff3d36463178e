import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../src/config.js';
import { createWebhookHttpClient } from '../src/webhooks/http-client.js';
import {
  checkWebhookUrl,
  classifyAddress,
  isForbiddenAddress,
  refusedAddressKind,
} from '../src/webhooks/url-safety.js';
import { startReceiver } from './helpers/receiver.js';

const forbidden: Array<[string, string]> = [
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['::1', 'loopback'],
  ['0:0:0:0:0:0:0:1', 'loopback'],
  ['10.0.0.1', 'private'],
  ['10.255.255.255', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.1', 'private'],
  ['fc00::1', 'private'],
  ['fd12:3456:789a::1', 'private'],
  ['169.254.0.1', 'link-local'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local'],
  ['febf::1', 'link-local'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['ff02::1', 'multicast'],
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['::', 'unspecified'],
  ['100.64.0.1', 'shared (carrier-grade NAT)'],
  ['100.127.255.255', 'shared (carrier-grade NAT)'],
  ['100.100.100.200', 'cloud metadata'],
  ['169.254.169.254', 'cloud metadata'],
  ['fd00:ec2::254', 'cloud metadata'],
  ['255.255.255.255', 'broadcast'],
  ['240.0.0.1', 'reserved'],
  ['192.0.0.192', 'reserved'],
  ['198.18.0.1', 'reserved'],
  ['192.0.2.1', 'documentation'],
  ['198.51.100.7', 'documentation'],
  ['203.0.113.9', 'documentation'],
  ['2001:db8::1', 'documentation'],
  // IPv4-mapped IPv6 is judged by the IPv4 address it reaches, in every spelling.
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['::FFFF:10.0.0.1', 'private'],
  ['0:0:0:0:0:ffff:169.254.169.254', 'cloud metadata'],
  ['::ffff:192.168.0.1', 'private'],
  // Other IPv6 forms that reach an IPv4 address: NAT64 and 6to4.
  ['64:ff9b::a00:1', 'private'],
  ['64:ff9b::127.0.0.1', 'loopback'],
  ['2002:7f00:1::', 'loopback'],
  ['2002:a9fe:a9fe::1', 'cloud metadata'],
  ['::127.0.0.1', 'reserved'],
  ['2001::1', 'reserved'],
  ['100::1', 'reserved'],
  ['not-an-ip', 'invalid'],
  ['', 'invalid'],
  ['1.2.3', 'invalid'],
  ['256.1.1.1', 'invalid'],
  ['example.com', 'invalid'],
];

const allowed = [
  '8.8.8.8',
  '1.1.1.1',
  '93.184.216.34',
  '172.15.255.255',
  '172.32.0.1',
  '100.63.255.255',
  '100.128.0.1',
  '169.253.255.255',
  '192.169.0.1',
  '223.255.255.255',
  '2606:4700:4700::1111',
  '2a00:1450:4001:80b::200e',
  '::ffff:8.8.8.8',
  '64:ff9b::808:808',
  '2002:808:808::1',
];

describe('isForbiddenAddress', () => {
  for (const [address, kind] of forbidden) {
    test(`forbids ${address || '(empty)'} as ${kind}`, () => {
      assert.equal(isForbiddenAddress(address), true);
      assert.equal(classifyAddress(address), kind);
    });
  }
  for (const address of allowed) {
    test(`allows the public address ${address}`, () => {
      assert.equal(isForbiddenAddress(address), false);
      assert.equal(classifyAddress(address), null);
    });
  }
});

/** A resolver that knows a few names and never touches the network. */
function fakeLookup(table: Record<string, string[]>) {
  const asked: string[] = [];
  const lookup = async (hostname: string) => {
    asked.push(hostname);
    const addresses = table[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses;
  };
  return { lookup, asked };
}

describe('checkWebhookUrl', () => {
  const { lookup, asked } = fakeLookup({
    'internal.example.com': ['10.0.0.1'],
    'public.example.com': ['93.184.216.34'],
    'mixed.example.com': ['93.184.216.34', '127.0.0.1'],
    'v6.example.com': ['2606:4700:4700::1111'],
    'mapped.example.com': ['::ffff:169.254.169.254'],
    'metadata.google.internal': ['169.254.169.254'],
    'empty.example.com': [],
  });
  const production = { production: true, lookup };
  const development = { production: false, lookup };

  test('refuses a host that resolves to a private address in production, naming why', async () => {
    const verdict = await checkWebhookUrl('https://internal.example.com/hooks', production);
    assert.deepEqual(verdict, {
      ok: false,
      reason: 'host_not_allowed',
      message: 'url must have a host name that resolves to public addresses only, as required in production',
      detail: 'the host name resolves to a private address',
    });
    assert.ok(!JSON.stringify(verdict).includes('10.0.0.1'), 'the resolved address is not told');
  });

  test('allows the same host in development, without resolving it', async () => {
    const before = asked.length;
    assert.deepEqual(await checkWebhookUrl('https://internal.example.com/hooks', development), { ok: true });
    assert.equal(asked.length, before);
  });

  test('allows localhost and loopback addresses in development', async () => {
    for (const url of ['http://localhost:3000/webhook', 'http://127.0.0.1:8080/', 'http://[::1]:9000/x']) {
      assert.deepEqual(await checkWebhookUrl(url, development), { ok: true }, url);
    }
  });

  test('allows a host whose every address is public in production', async () => {
    for (const url of ['https://public.example.com/hooks', 'http://v6.example.com:8443/x?y=1', 'https://8.8.8.8/']) {
      assert.deepEqual(await checkWebhookUrl(url, production), { ok: true }, url);
    }
  });

  test('refuses a host when any one of its addresses is forbidden', async () => {
    const verdict = await checkWebhookUrl('https://mixed.example.com/', production);
    assert.equal(verdict.ok, false);
    assert.match(!verdict.ok ? (verdict.detail ?? '') : '', /loopback/);
  });

  test('refuses cloud metadata, also behind an IPv4-mapped IPv6 answer', async () => {
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://metadata.google.internal/computeMetadata/v1/',
      'http://mapped.example.com/',
      'http://[::ffff:169.254.169.254]/',
      'http://[fd00:ec2::254]/',
    ]) {
      const verdict = await checkWebhookUrl(url, production);
      assert.equal(verdict.ok, false, url);
      // A literal address is named in the answer; a host name's address only in the log detail.
      assert.match(!verdict.ok ? `${verdict.message} ${verdict.detail ?? ''}` : '', /cloud metadata address/, url);
    }
  });

  test('refuses localhost, loopback literals and their disguises in production', async () => {
    for (const url of [
      'http://localhost/',
      'http://LOCALHOST:8080/',
      'http://localhost./',
      'http://api.localhost/',
      'http://127.0.0.1/',
      'http://127.1/',
      'http://2130706433/',
      'http://0x7f.0.0.1/',
      'http://[::1]/',
      'http://[::ffff:127.0.0.1]/',
      'http://0.0.0.0:8080/',
      'http://[::]/',
    ]) {
      const verdict = await checkWebhookUrl(url, production);
      assert.equal(verdict.ok, false, url);
      assert.match(!verdict.ok ? verdict.message : '', /not allowed in production$/, url);
    }
  });

  test('refuses a host that does not resolve in production', async () => {
    for (const url of ['https://nowhere.example.com/', 'https://empty.example.com/']) {
      const verdict = await checkWebhookUrl(url, production);
      assert.deepEqual(verdict, {
        ok: false,
        reason: 'host_not_allowed',
        message: 'url must have a host name that resolves to public addresses only, as required in production',
        detail: 'the host name does not resolve',
      });
    }
  });

  test('gives up on a lookup that does not answer in time', async () => {
    const verdict = await checkWebhookUrl('https://slow.example.com/', {
      production: true,
      lookup: () => new Promise(() => {}),
      lookupTimeoutMs: 20,
    });
    assert.equal(verdict.ok, false);
  });

  test('refuses schemes other than http and https, in every mode', async () => {
    for (const url of ['ftp://public.example.com/', 'file:///etc/passwd', 'javascript:alert(1)', 'gopher://x/']) {
      for (const options of [production, development]) {
        const verdict = await checkWebhookUrl(url, options);
        assert.deepEqual(verdict, { ok: false, reason: 'invalid', message: 'url must be an http or https URL' }, url);
      }
    }
  });

  test('refuses credentials in the URL without repeating them, in every mode', async () => {
    for (const url of ['https://user:s3cret-pw@public.example.com/', 'https://user@public.example.com/']) {
      for (const options of [production, development]) {
        const verdict = await checkWebhookUrl(url, options);
        assert.deepEqual(verdict, {
          ok: false,
          reason: 'credentials',
          message: 'url must not contain a user name or password',
        });
      }
    }
  });

  test('refuses text that is not a URL', async () => {
    for (const url of ['not a url', 'http://', 'http://[::1/', '']) {
      const verdict = await checkWebhookUrl(url, development);
      assert.equal(verdict.ok, false, url);
    }
  });
});

describe('outside production (docs/security.md, "Private addresses")', () => {
  const development = { production: false };
  const allowPrivate = { production: false, allowPrivate: true };
  const metadata = [
    'http://169.254.169.254/latest/meta-data/',
    'http://169.254.1.1/',
    'http://[fd00:ec2::254]/',
    'http://100.100.100.200/latest/meta-data/',
    'http://[::ffff:169.254.169.254]/',
    'http://2852039166/',
    'http://[fe80::1]/',
  ];
  const otherPrivate = [
    'http://10.0.0.1/hooks',
    'http://192.168.1.20:8080/',
    'http://172.16.0.1/',
    'http://[fc00::1]/',
    'http://100.64.0.1/',
    'http://0.0.0.0:8080/',
  ];
  const loopbackForms = [
    'http://127.0.0.1:4000/hooks',
    'http://localhost:4000/hooks',
    'http://2130706433/',
    'http://0x7f.0.0.1/',
    'http://127.1/',
    'http://[::1]:4000/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:7f00:1]/',
  ];

  test('cloud metadata and link-local addresses are refused in every mode, however written', async () => {
    for (const url of metadata) {
      for (const options of [development, allowPrivate]) {
        const verdict = await checkWebhookUrl(url, options);
        assert.equal(verdict.ok, false, url);
        assert.match(!verdict.ok ? verdict.message : '', /which webhooks may never reach$/, url);
      }
    }
  });

  test('loopback is allowed by default, in its numeric and IPv4-mapped forms too', async () => {
    for (const url of loopbackForms) assert.deepEqual(await checkWebhookUrl(url, development), { ok: true }, url);
  });

  test('other private addresses only with TESSERA_WEBHOOK_ALLOW_PRIVATE=on', async () => {
    for (const url of otherPrivate) {
      const verdict = await checkWebhookUrl(url, development);
      assert.equal(verdict.ok, false, url);
      assert.match(!verdict.ok ? verdict.message : '', /TESSERA_WEBHOOK_ALLOW_PRIVATE=on$/, url);
      assert.deepEqual(await checkWebhookUrl(url, allowPrivate), { ok: true }, url);
    }
  });

  test('the policy judges resolved addresses alike', () => {
    assert.equal(refusedAddressKind('::ffff:7f00:1', development), null);
    assert.equal(refusedAddressKind('10.0.0.1', development), 'private');
    assert.equal(refusedAddressKind('10.0.0.1', allowPrivate), null);
    assert.equal(refusedAddressKind('169.254.169.254', allowPrivate), 'cloud metadata');
    assert.equal(refusedAddressKind('127.0.0.1', { production: true, allowPrivate: true }), 'loopback');
  });

  test('the delivery client refuses a name that resolves to cloud metadata or a private address, and reaches loopback', async () => {
    const hook = await startReceiver();
    const port = new URL(hook.url()).port;
    const headers = { 'Content-Type': 'application/json' };
    const resolvingTo = (address: string) =>
      createWebhookHttpClient({ timeoutMs: 5000, production: false, resolve: async () => [{ address, family: 4 }] });
    const metadataClient = resolvingTo('169.254.169.254');
    const privateClient = resolvingTo('10.0.0.1');
    const loopbackClient = resolvingTo('127.0.0.1');
    try {
      for (const client of [metadataClient, privateClient]) {
        const outcome = await client.post(`http://hooks.example.com:${port}/webhook`, headers, '{}');
        assert.equal(outcome.ok, false);
        assert.match(!outcome.ok ? outcome.error : '', /may not reach/);
      }
      const literal = await loopbackClient.post('http://169.254.169.254/latest', headers, '{}');
      assert.equal(literal.ok, false);
      const reached = await loopbackClient.post(`http://hooks.example.com:${port}/webhook`, headers, '{}');
      assert.deepEqual(reached.ok && [reached.status, reached.body], [200, 'success']);
      assert.equal(hook.requests.length, 1);
    } finally {
      await Promise.all([metadataClient.close(), privateClient.close(), loopbackClient.close()]);
      await hook.close();
    }
  });

  test('TESSERA_WEBHOOK_ALLOW_PRIVATE is off by default, on when asked, and refused in production', () => {
    const base = { TESSERA_DATA_DIR: 'memory://', TESSERA_MASTER_KEY: 'a'.repeat(64) };
    assert.equal(loadConfig({ ...base }).webhookAllowPrivate, false);
    assert.equal(loadConfig({ ...base, TESSERA_WEBHOOK_ALLOW_PRIVATE: 'on' }).webhookAllowPrivate, true);
    assert.throws(
      () => loadConfig({ ...base, NODE_ENV: 'production', TESSERA_WEBHOOK_ALLOW_PRIVATE: 'on' }),
      /TESSERA_WEBHOOK_ALLOW_PRIVATE=on is for development/,
    );
    assert.throws(() => loadConfig({ ...base, TESSERA_WEBHOOK_ALLOW_PRIVATE: 'yes' }), /TESSERA_WEBHOOK_ALLOW_PRIVATE/);
  });
});
