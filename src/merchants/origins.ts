/**
 * The merchant's website origins (issue 14): the pages allowed to frame Tessera's card field. Each
 * is an origin exactly as a browser names it (`https://shop.example`, `http://127.0.0.1:8080`):
 * scheme, host and port only, so that it can be written as such into a CSP frame-ancestors list.
 */
import { invalidField } from '../core/errors.js';

export const maxWebsiteOrigins = 20;

const rule =
  'must be an origin such as https://shop.example: http or https, a host and an optional port, with no path, query or trailing slash';

/** The origin as given, or a 400 naming `websiteOrigins[i]`; duplicates are refused too. */
export function checkWebsiteOrigins(origins: readonly string[], param = 'websiteOrigins'): string[] {
  if (origins.length > maxWebsiteOrigins)
    throw invalidField(param, `${param} has at most ${maxWebsiteOrigins} origins`, 'maxItems');
  const seen = new Set<string>();
  return origins.map((origin, index) => {
    const at = `${param}[${index}]`;
    if (!isOrigin(origin)) throw invalidField(at, `${at} ${rule}`, 'origin');
    if (seen.has(origin)) throw invalidField(at, `${at} repeats ${origin}`, 'unique');
    seen.add(origin);
    return origin;
  });
}

export function isOrigin(text: string): boolean {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return false;
  }
  // The URL's own origin is lower-case, with the default port dropped: the text must be exactly it.
  return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === text;
}
