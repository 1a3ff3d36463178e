/*
 * The texts of the endpoint health e-mails (docs/webhooks.md "Endpoint health"). Plain text only:
 * every value in them is the merchant's own (its endpoint URL, its receiver's answer), and none is
 * card data (a delivery's error says how the receiver answered, never what was sent).
 */

export interface EndpointMailView {
  merchantName: string;
  mode: string;
  endpointId: string;
  /** The endpoint's URL, or a phrase for the dynamic endpoint. */
  target: string;
  failingSince: string | null;
  lastError: string | null;
  nextAttemptAt: string | null;
  disabledReason: 'failing' | 'gone' | null;
  pageUrl: string;
}

const modeNote = (mode: string) => (mode === 'live' ? '' : ` (${mode} mode)`);

export function alertMail(view: EndpointMailView): { subject: string; text: string } {
  return {
    subject: `Webhook endpoint failing${modeNote(view.mode)}: ${view.target}`,
    text: [
      `Hello ${view.merchantName} team,`,
      '',
      `Tessera has not been able to deliver webhooks to ${view.target} (${view.endpointId})${modeNote(view.mode)}.`,
      `Every attempt since ${view.failingSince ?? 'recently'} has failed.`,
      `Last error: ${view.lastError ?? 'unknown'}`,
      view.nextAttemptAt ? `Next attempt: ${view.nextAttemptAt}` : 'No attempt is scheduled.',
      '',
      'Failed deliveries are retried on the usual schedule. If the endpoint keeps failing, Tessera disables it;',
      'once it works again, recover the events it missed from the endpoint page:',
      view.pageUrl,
      '',
      'You receive this as an Owner, Administrator or Developer; it is repeated once a day while the endpoint fails.',
    ].join('\n'),
  };
}

export function disabledMail(view: EndpointMailView): { subject: string; text: string } {
  const why =
    view.disabledReason === 'gone'
      ? 'it answered HTTP 410 Gone, which says the endpoint no longer exists.'
      : `every attempt since ${view.failingSince ?? 'several days ago'} has failed.`;
  return {
    subject: `Webhook endpoint disabled${modeNote(view.mode)}: ${view.target}`,
    text: [
      `Hello ${view.merchantName} team,`,
      '',
      `Tessera has disabled the webhook endpoint ${view.target} (${view.endpointId})${modeNote(view.mode)}:`,
      why,
      view.lastError ? `Last error: ${view.lastError}` : '',
      '',
      'It receives nothing until it is enabled again. After fixing the receiver, enable it on the endpoint page and',
      'recover the events it missed (or: tessera webhooks update <id> --enable, then tessera webhooks recover <id>):',
      view.pageUrl,
    ]
      .filter((line, index, lines) => line !== '' || lines[index - 1] !== '')
      .join('\n'),
  };
}
