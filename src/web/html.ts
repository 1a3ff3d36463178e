/**
 * The one HTML kit (docs/decisions/0047-one-html-kit.md): every page and e-mail the service
 * renders — the dashboard, the shopper's pages, the card frame, the API reference, the invoice
 * e-mail — is written with the `html` tagged template. Every interpolated value is escaped unless
 * it is itself the output of `html`; arrays are joined; null, undefined and false render nothing.
 *
 * Where a value lands decides what else is done to it:
 * - in a URL attribute (`href`, `src`, `action`…), a value whose scheme is not http or https
 *   (`javascript:`, `data:`, `vbscript:`…) is replaced by `about:invalid`, so a merchant's or a
 *   shopper's URL can never run script when followed;
 * - in an attribute written without quotes (`class=${x}`), the value is quoted;
 * - in an event-handler attribute (`onclick="${x}"`), nothing may be interpolated: the template
 *   throws, as it would for any other mistake of the page's author.
 *
 * `SafeHtml` can be made by this module only (its constructor takes a token no other module has),
 * so "raw" HTML is only ever a fragment the kit itself made.
 */

import { randomBytes } from 'node:crypto';

const kitToken: unique symbol = Symbol('html kit');

export class SafeHtml {
  readonly text: string;
  constructor(token: typeof kitToken, text: string) {
    if (token !== kitToken) throw new TypeError('SafeHtml is made by the html template only');
    this.text = text;
  }
  toString(): string {
    return this.text;
  }
}

export type HtmlValue = SafeHtml | string | number | bigint | boolean | null | undefined | readonly HtmlValue[];

const entities: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text as HTML text or as a quoted attribute's value: the five characters that could end either. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => entities[character] ?? character);
}

/** The attributes whose value the browser follows or loads as a URL. */
const urlAttributes = new Set([
  'href',
  'src',
  'action',
  'formaction',
  'poster',
  'cite',
  'background',
  'data',
  'srcset',
  'xlink:href',
  'manifest',
  'ping',
]);

/** What a refused URL is replaced by: a URL that does nothing when followed or loaded. */
export const refusedUrl = 'about:invalid';

/**
 * Whether a URL, as the browser reads an attribute's value, is http(s) or relative. Browsers drop
 * leading spaces and control characters and any tab or line break before they read the scheme
 * (`java\tscript:` is `javascript:`), so the check does too.
 */
export function isSafeUrl(url: string): boolean {
  let start = 0;
  const unbroken = url.replace(/[\t\n\r]/g, '');
  while (start < unbroken.length && unbroken.charCodeAt(start) <= 0x20) start += 1;
  const cleaned = unbroken.slice(start);
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(cleaned);
  if (!scheme) return true;
  const name = scheme[1]!.toLowerCase();
  return name === 'http' || name === 'https';
}

const decodedEntities: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" };

/** An attribute value as the browser reads it (the kit's own entities, and numeric ones, decoded). */
function attributeValue(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39|#x?[0-9a-fA-F]+);?/g, (whole, name: string) => {
    if (name in decodedEntities) return decodedEntities[name]!;
    const code =
      name.startsWith('#x') || name.startsWith('#X') ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
    return Number.isFinite(code) && code > 0 && code < 0x110000 ? String.fromCodePoint(code) : whole;
  });
}

function render(value: HtmlValue): string {
  if (value instanceof SafeHtml) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
}

/** An attribute being written when a value is interpolated: its name and its quote (none: ''). */
interface OpenAttribute {
  name: string;
  quote: '"' | "'" | '';
  /** Where its value starts in the output. */
  start: number;
}

/** An attribute left open at the end of a piece: `name="text`, `name='text` or `name=text`. */
const attributeOpening = /(?:^|\s)([a-zA-Z_:][-a-zA-Z0-9_:.]*)\s*=\s*(?:(")([^"]*)|(')([^']*)|()([^\s"'<>=`]*))$/;

/**
 * The attribute a static piece leaves open (`… href="/pay?x=` → href, `"`), or null when the piece
 * ends outside any attribute value.
 */
function openedAttribute(piece: string, output: string): OpenAttribute | null {
  // Only inside a tag: `x = ` in a paragraph's text is text. Escaped values hold no `<` or `>`; a
  // fragment with neither may be a tag's attributes, so it is read as one.
  const lastOpen = output.lastIndexOf('<');
  const lastClose = output.lastIndexOf('>');
  if (lastClose !== -1 && lastOpen < lastClose) return null;
  const opening = attributeOpening.exec(piece);
  if (!opening) return null;
  const name = opening[1]!.toLowerCase();
  const quote = (opening[2] ?? opening[4] ?? '') as OpenAttribute['quote'];
  const already = opening[3] ?? opening[5] ?? opening[7] ?? '';
  return { name, quote, start: output.length - already.length };
}

/** Where a quoted attribute value closes in a static piece (-1 when it stays open). */
function closingIndex(piece: string, quote: '"' | "'"): number {
  return piece.indexOf(quote);
}

/** The value of a URL attribute, checked now that it is complete; refused URLs replaced. */
function checkedUrlValue(output: string, attribute: OpenAttribute): string {
  const value = output.slice(attribute.start);
  return isSafeUrl(attributeValue(value)) ? output : output.slice(0, attribute.start) + refusedUrl;
}

export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let output = '';
  let open: OpenAttribute | null = null;
  for (let index = 0; index < strings.length; index += 1) {
    let piece = strings[index] ?? '';
    if (open && open.quote !== '') {
      // Still inside a quoted value: it ends at this piece's first matching quote, if any.
      const close = closingIndex(piece, open.quote);
      if (close === -1) {
        output += piece;
      } else {
        output += piece.slice(0, close);
        if (urlAttributes.has(open.name)) output = checkedUrlValue(output, open);
        piece = piece.slice(close);
        open = null;
      }
    }
    if (!open) {
      output += piece;
      if (index < values.length) open = openedAttribute(piece, output);
    }
    if (index >= values.length) break;
    if (open && /^on/.test(open.name)) throw new Error(`html: nothing may be interpolated into ${open.name}`);
    const rendered = render(values[index]);
    if (open && open.quote === '') {
      // An unquoted attribute (`a=${x}`, `a=b${x}`): the value quoted here, so that a space in it
      // cannot start another attribute, and checked when it is a URL.
      const value = output.slice(open.start) + rendered;
      const checked = urlAttributes.has(open.name) && !isSafeUrl(attributeValue(value)) ? refusedUrl : value;
      output = `${output.slice(0, open.start)}"${checked}"`;
      open = null;
    } else {
      output += rendered;
    }
  }
  // A fragment that ends inside a quoted value (its end is written by another template): the URL
  // is checked as far as it goes, which is where its scheme is.
  if (open && open.quote !== '' && urlAttributes.has(open.name)) output = checkedUrlValue(output, open);
  return new SafeHtml(kitToken, output);
}

/**
 * A style sheet written in the source, for a page's `<style>` element: static text only (no
 * interpolation, so nothing from outside can reach it), and never one that could close the element.
 */
export function styleText(strings: TemplateStringsArray, ...none: never[]): SafeHtml {
  if (none.length > 0 || strings.length !== 1) throw new Error('styleText: a style sheet takes no values');
  const text = strings.raw[0]!;
  if (/<\/?style/i.test(text) || text.includes('<!--')) throw new Error('styleText: the text could end its element');
  return new SafeHtml(kitToken, text);
}

/**
 * A whole page, and the nonce its scripts carry: the page's Content-Security-Policy allows scripts
 * by that nonce only (`script-src 'nonce-…'`, docs/decisions/0047-one-html-kit.md), so that a
 * script element the page did not write itself never runs, whatever its source.
 */
export class HtmlDocument extends SafeHtml {
  constructor(
    token: typeof kitToken,
    text: string,
    readonly scriptNonce: string,
  ) {
    super(token, text);
  }
}

/** A page built with a fresh nonce for its scripts (`script(src, nonce)`). */
export function htmlDocument(build: (nonce: string) => SafeHtml): HtmlDocument {
  const nonce = randomBytes(18).toString('base64');
  return new HtmlDocument(kitToken, build(nonce).text, nonce);
}

/** A script of this origin, run under the page's nonce. */
export function script(src: string, nonce: string, { defer = false }: { defer?: boolean } = {}): SafeHtml {
  return defer
    ? html`<script src="${src}" nonce="${nonce}" defer></script>`
    : html`<script src="${src}" nonce="${nonce}"></script>`;
}

/**
 * The script-src of a page's Content-Security-Policy: its nonce when it is a document whose scripts
 * carry it, else none at all.
 */
export function scriptSource(page: SafeHtml | null): string {
  const runsScripts = page instanceof HtmlDocument && page.text.includes(`nonce="${page.scriptNonce}"`);
  return runsScripts ? `'nonce-${page.scriptNonce}'` : "'none'";
}

/**
 * A table's rows with each cell labelled by its column (`data-label`), for layouts that stack a
 * row's cells at phone widths. Rows are `html` output, in which a literal `<td` can only be markup
 * (text is escaped), so the rewrite cannot touch a value.
 */
export function labelCells(rows: readonly SafeHtml[], headers: readonly string[]): SafeHtml[] {
  return rows.map((row) => {
    let cell = 0;
    return new SafeHtml(
      kitToken,
      row.text
        .replace(/<tr\b/g, () => ((cell = 0), '<tr'))
        .replace(/<td\b/g, () => `<td data-label="${escapeHtml(headers[cell++] ?? '')}"`),
    );
  });
}
