/**
 * What every page the service renders must hold (docs/decisions/0047-one-html-kit.md): scripts run
 * only under the page's nonce, which its Content-Security-Policy names, and nothing in the page
 * could run script in another way (an event-handler attribute, a `javascript:` URL, an inline
 * script without the nonce).
 */
import assert from 'node:assert/strict';

type Headers = Record<string, string | string[] | number | undefined>;

/** A Content-Security-Policy's directives by name. */
export function policyDirectives(headers: Headers): Map<string, string> {
  const csp = headers['content-security-policy'];
  assert.ok(typeof csp === 'string' && csp.length > 0, 'the page carries a Content-Security-Policy');
  return new Map(
    csp.split(';').map((part) => {
      const [name, ...values] = part.trim().split(/\s+/);
      return [name!.toLowerCase(), values.join(' ')] as const;
    }),
  );
}

/** The scripts of a page: each start tag and the nonce it carries. */
export function scriptTags(body: string): Array<{ tag: string; nonce: string | undefined; inline: boolean }> {
  return [...body.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script\s*>/gi)].map((match) => ({
    tag: `<script${match[1]}>`,
    nonce: /\snonce="([^"]*)"/.exec(match[1]!)?.[1],
    inline: match[2]!.trim() !== '',
  }));
}

/**
 * The page's scripts all carry the nonce its policy names, its policy allows scripts by that nonce
 * only (no 'self', no host, no 'unsafe-inline' or 'unsafe-eval'), and a page without scripts
 * allows none. Returns the page's script sources.
 */
export function assertScriptsUnderNonce(headers: Headers, body: string): string[] {
  const directives = policyDirectives(headers);
  const scriptSource = directives.get('script-src') ?? directives.get('default-src');
  assert.ok(scriptSource !== undefined, 'the policy governs scripts');
  assert.ok(!directives.has('script-src-elem') && !directives.has('script-src-attr'), 'no second script policy');
  const scripts = scriptTags(body);
  if (scripts.length === 0) {
    assert.match(scriptSource, /^'none'$/, 'a page without scripts allows none');
    return [];
  }
  const nonce = /^'nonce-([A-Za-z0-9+/=]{16,})'$/.exec(scriptSource)?.[1];
  assert.ok(nonce, `scripts are allowed by a nonce only: script-src ${scriptSource}`);
  for (const script of scripts) {
    assert.equal(script.nonce, nonce, `${script.tag} carries the page's nonce`);
    assert.equal(script.inline, false, `${script.tag} is a file of this origin, not inline`);
  }
  return scripts.map((script) => /\ssrc="([^"]*)"/.exec(script.tag)?.[1] ?? '');
}

const urlAttributes = new Set(['href', 'src', 'action', 'formaction', 'poster', 'data', 'cite', 'background']);

/** An attribute's value as the browser reads it: entities decoded, tabs and line breaks dropped. */
function attributeValue(text: string): string {
  return text
    .replace(/&(#x?[0-9a-f]+|amp|lt|gt|quot|apos);?/gi, (_whole, name: string) => {
      const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
      if (name.toLowerCase() in named) return named[name.toLowerCase()]!;
      const code = /^#x/i.test(name) ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return String.fromCodePoint(code);
    })
    .replace(/[\t\n\r]/g, '')
    .trim();
}

/**
 * Nothing in the page runs script but its nonce'd files: no element has an event-handler
 * attribute, and no URL attribute holds a scheme but http, https (or the kit's about:invalid).
 */
export function assertInert(body: string): void {
  for (const [tag] of body.matchAll(/<[a-zA-Z][^<>]*>/g)) {
    const attributes = [...tag.matchAll(/\s([^\s"'<>/=]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/g)];
    // Outside quoted values, only these attributes: nothing an escaped value could have added.
    const bare = tag.replace(/"[^"]*"|'[^']*'/g, '""');
    assert.doesNotMatch(bare, /\son[a-z]+\s*=/i, `no event-handler attribute: ${tag}`);
    for (const [, name, doubled, single, unquoted] of attributes) {
      if (!urlAttributes.has(name!.toLowerCase())) continue;
      const value = attributeValue(doubled ?? single ?? unquoted ?? '');
      const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(value)?.[1]?.toLowerCase();
      assert.ok(
        scheme === undefined || scheme === 'http' || scheme === 'https' || value === 'about:invalid',
        `no URL but http(s) or relative: ${tag}`,
      );
    }
  }
}
