/**
 * The one HTML kit (docs/decisions/0047-one-html-kit.md): what it does to a value depends on where
 * the value lands — text, a quoted or unquoted attribute, a URL attribute, an event handler.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { html, htmlDocument, isSafeUrl, labelCells, script, scriptSource, styleText } from '../src/web/html.js';

describe('the HTML kit', () => {
  test('escapes every value in text and attributes; only its own fragments go in as they are', () => {
    const value = `<script>alert(1)</script>"'&`;
    assert.equal(
      html`<p title="${value}">${value}${html`<b>${value}</b>`}</p>`.text,
      '<p title="&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;">' +
        '&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;<b>&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;</b></p>',
    );
    assert.equal(html`<p>${['a', html`<i>b</i>`, null, undefined, false, 0]}</p>`.text, '<p>a<i>b</i>0</p>');
  });

  test('a URL attribute keeps http, https and relative addresses and refuses every other scheme', () => {
    for (const url of ['https://shop.example/a?b=c&d=e', 'http://x', '/checkout/cs_1', 'page?x=javascript:1', '#top'])
      assert.ok(isSafeUrl(url), url);
    for (const url of [
      'javascript:alert(1)',
      ' JaVaScRiPt:alert(1)',
      'java\tscript:x',
      '\u0001javascript:x',
      'data:text/html,x',
      'vbscript:x',
    ])
      assert.ok(!isSafeUrl(url), url);
    assert.equal(html`<a href="${'javascript:alert(1)'}">x</a>`.text, '<a href="about:invalid">x</a>');
    assert.equal(html`<a href="${''}${'javascript:alert(1)'}">x</a>`.text, '<a href="about:invalid">x</a>');
    assert.equal(html`<form action="${'data:text/html,hi'}"></form>`.text, '<form action="about:invalid"></form>');
    // prettier-ignore
    assert.equal(html`<img src=${'javascript:x'}>`.text, '<img src="about:invalid">');
    assert.equal(html`<a href="/pay?next=${'javascript:x'}">x</a>`.text, '<a href="/pay?next=javascript:x">x</a>');
  });

  test('an unquoted attribute value is quoted; nothing may go into an event handler', () => {
    assert.equal(html`<p class=${'a onclick=alert(1)'}>x</p>`.text, '<p class="a onclick=alert(1)">x</p>');
    assert.equal(html`<p>1 = ${2}</p>`.text, '<p>1 = 2</p>');
    assert.throws(() => html`<a onclick="${'x'}">x</a>`, /onclick/);
  });

  test("a document's scripts carry its nonce, which its script-src names; without scripts, none", () => {
    // prettier-ignore
    const page = htmlDocument((nonce) => html`<head>${script('/a.js', nonce)}</head>`);
    assert.match(page.scriptNonce, /^[A-Za-z0-9+/]{24}$/);
    assert.equal(page.text, `<head><script src="/a.js" nonce="${page.scriptNonce}"></script></head>`);
    assert.equal(scriptSource(page), `'nonce-${page.scriptNonce}'`);
    assert.equal(scriptSource(htmlDocument(() => html`<p>no script</p>`)), "'none'");
    assert.equal(scriptSource(html`<p>x</p>`), "'none'");
    assert.notEqual(htmlDocument(() => html``).scriptNonce, htmlDocument(() => html``).scriptNonce);
  });

  test('labelCells labels cells by column; styleText refuses what could end its element', () => {
    // prettier-ignore
    const [row] = labelCells([html`<tr><td>${'<td>'}</td><td>b</td></tr>`], ['One', 'T"wo']);
    assert.equal(row!.text, '<tr><td data-label="One">&lt;td&gt;</td><td data-label="T&quot;wo">b</td></tr>');
    assert.equal(styleText`a{color:red}`.text, 'a{color:red}');
    assert.throws(() => styleText`</style><script>`, /end its element/);
  });
});
