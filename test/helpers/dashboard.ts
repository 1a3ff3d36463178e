/**
 * A team member's browser at the HTTP level (server.inject): keeps cookies, reads each page's CSRF
 * token, and posts forms as a browser does. The browser tests use real chromium instead.
 */
import type { TestContext } from './harness.js';

/** A page as the member's browser received it. */
export interface DashboardAnswer {
  status: number;
  body: string;
  location?: string;
  headers: Record<string, string | string[] | number | undefined>;
}

export interface DashboardClient {
  get(path: string): Promise<DashboardAnswer>;
  post(path: string, fields?: Record<string, string>): Promise<DashboardAnswer>;
  cookies: Map<string, string>;
}

export function dashboardClient(ctx: TestContext): DashboardClient {
  const cookies = new Map<string, string>();
  let csrf = '';
  async function send(method: 'GET' | 'POST', path: string, fields?: Record<string, string>) {
    const response = await ctx.tessera.server.inject({
      method,
      url: path.startsWith('/') ? path : new URL(path).pathname + new URL(path).search,
      headers: {
        cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; '),
        ...(fields ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      payload: fields ? new URLSearchParams({ _csrf: csrf, ...fields }).toString() : undefined,
    });
    for (const header of [response.headers['set-cookie'] ?? []].flat()) {
      const [pair] = String(header).split(';');
      const [name, value] = (pair ?? '').split('=');
      if (name) {
        if (value) cookies.set(name, value);
        else cookies.delete(name);
      }
    }
    const token = /name="_csrf" value="([^"]+)"/.exec(response.body)?.[1];
    if (token) csrf = token;
    return {
      status: response.statusCode,
      body: response.body,
      location: response.headers.location as string | undefined,
      headers: response.headers,
    };
  }
  return { get: (path) => send('GET', path), post: (path, fields = {}) => send('POST', path, fields), cookies };
}

/** The first link to the dashboard in the newest e-mail to `to` kept by the in-memory transport. */
export function linkInMail(ctx: TestContext, to: string): string {
  const mail = [...ctx.tessera.mail.kept()].reverse().find((message) => message.to === to);
  if (!mail) throw new Error(`no e-mail to ${to}`);
  const match = /https?:\/\/\S+\/dashboard\/set-password\?token=[A-Za-z0-9_-]+/.exec(
    mail.raw.replace(/=\r?\n/g, '').replace(/=3D/g, '='),
  );
  if (!match) throw new Error('no link in the e-mail');
  return match[0];
}

/** Follows a set-password link: the member chooses `password` and is signed in. */
export async function acceptLink(client: DashboardClient, link: string, password: string) {
  await client.get(link);
  const answer = await client.post('/dashboard/set-password', {
    token: new URL(link).searchParams.get('token') ?? '',
    password,
  });
  // The session's own CSRF token, read from the home page, for the forms that follow.
  if (answer.status === 303) await client.get('/dashboard');
  return answer;
}

/** Makes an Owner for a merchant made by ctx.merchant() and signs it in with `password`. */
export async function signedInOwner(ctx: TestContext, merchantId: string, email: string, password: string) {
  const { link } = await ctx.tessera.db.transaction((tx) => ctx.tessera.team.createOwner(tx, merchantId, email));
  const client = dashboardClient(ctx);
  const answer = await acceptLink(client, link, password);
  if (answer.status !== 303) throw new Error(`the Owner could not set a password: ${answer.status}`);
  return client;
}
