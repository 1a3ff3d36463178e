/**
 * docs/api.md#states, docs/checkout.md, docs/api.md#compatibility-with-existing-clients: the shop's returnUrl (or cancelUrl) keeps its query byte for byte — a shop
 * may compare or sign it, and `route=extension/moneycollect/back` must not come back as
 * `route=extension%2Fmoneycollect%2Fback` — so the parameters are appended to the text as written,
 * after `&` when it has a query already (`?` when not), before any fragment. Only the appended
 * values are encoded.
 */
export function withQueryParameters(url: string, parameters: Record<string, string>): string {
  const hashAt = url.indexOf('#');
  const base = hashAt === -1 ? url : url.slice(0, hashAt);
  const fragment = hashAt === -1 ? '' : url.slice(hashAt);
  const query = new URLSearchParams(parameters).toString();
  const separator = !base.includes('?') ? '?' : base.endsWith('?') || base.endsWith('&') ? '' : '&';
  return `${base}${separator}${query}${fragment}`;
}
