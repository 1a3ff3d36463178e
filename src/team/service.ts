import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { Db, Queryable } from '../db/db.js';
import { hashKey } from '../core/merchant-context.js';
import { DomainError, invalidField } from '../core/errors.js';
import { newId } from '../ids.js';
import type { MailTransport } from '../mail/transport.js';
import { can, roleNames, type Permission, type Role } from './permissions.js';
import * as queries from './queries.js';
import { passwords, secretToken } from './passwords.js';
import { accountActions } from './account.js';
import { challengeLifetimeMs, createTwoFactor } from './two-factor.js';
import type { Vault } from '../vault/vault.js';

/** How long a one-time link works (issue 11: invitations and resets expire in 72 h). */
export const linkLifetimeMs = 72 * 60 * 60 * 1000;
/** A session not used for this long is over. */
export const sessionIdleMs = 2 * 60 * 60 * 1000;
/** Failed sign-ins are counted over this window, per account and per client address. */
export const signInWindowMs = 15 * 60 * 1000;
export const maxFailuresPerAccount = 5;
export const maxFailuresPerAddress = 30;
export const minPasswordLength = 10;

/** Who acts in the dashboard, for permission checks and the audit log. */
export interface Actor {
  merchantId: string;
  memberId: string;
  role: Role;
  mode: 'test' | 'live';
  clientAddress: string;
}

export interface Member {
  id: string;
  email: string;
  name: string;
  role: Role;
  hasPassword: boolean;
  created: Date;
}

export interface SessionView {
  tokenHash: string;
  csrfToken: string;
  mode: 'test' | 'live';
  member: Member & { merchantId: string };
  /** The team requires two-factor sign-in and this member has not set it up: only enrolment is open. */
  mustEnrolTwoFactor: boolean;
}

export type SignInResult =
  | { ok: true; sessionToken: string; member: Member }
  /** The password was right and the member signs in with a code too: `challenge` carries the first step. */
  | { ok: 'code'; challenge: string }
  | { ok: false; reason: 'invalid' | 'account_locked' | 'address_limited' };

function toMember(row: queries.MemberRow): Member {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    role: row.role,
    hasPassword: row.password_hash !== null,
    created: new Date(row.created_at),
  };
}

/** The same answer for equal strings whatever their content, so a CSRF check leaks no prefix. */
export function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

export interface TeamServiceDeps {
  db: Db;
  clock: Clock;
  mail: MailTransport;
  publicUrl: () => string;
  /** Encrypts two-factor secrets (context: the member id). */
  vault: Pick<Vault, 'encrypt' | 'decrypt'>;
}

export function createTeamService({ db, clock, mail, publicUrl, vault }: TeamServiceDeps) {
  const linkUrl = (kind: queries.LinkKind, token: string) =>
    `${publicUrl()}/dashboard/${kind === 'sign_in' ? 'link' : 'set-password'}?token=${token}`;

  async function insertLink(tx: Queryable, memberId: string, kind: queries.LinkKind, lifetimeMs: number) {
    const token = secretToken();
    const now = clock.now();
    await queries.insertLink(tx, {
      tokenHash: hashKey(token),
      memberId,
      kind,
      expiresAt: new Date(now.getTime() + lifetimeMs),
      now,
    });
    return token;
  }

  async function issueLink(tx: Queryable, memberId: string, kind: queries.LinkKind): Promise<string> {
    return linkUrl(kind, await insertLink(tx, memberId, kind, linkLifetimeMs));
  }

  async function openSession(memberId: string, clientAddress: string): Promise<string> {
    const token = secretToken();
    await queries.insertSession(db, {
      tokenHash: hashKey(token),
      memberId,
      csrfToken: secretToken(),
      clientAddress,
      now: clock.now(),
    });
    return token;
  }

  async function audit(actor: Actor, action: string, objectId: string | null, source: Queryable = db) {
    await queries.insertAudit(source, {
      merchantId: actor.merchantId,
      mode: actor.mode,
      action,
      objectId,
      actor: `member:${actor.memberId}`,
      clientAddress: actor.clientAddress,
      now: clock.now(),
    });
  }

  function requireEmail(email: string): string {
    const trimmed = email.trim();
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(trimmed) || trimmed.length > 254)
      throw invalidField('email', 'email must be a valid email address', 'format');
    return trimmed;
  }

  async function addMember(
    tx: Queryable,
    merchantId: string,
    input: { email: string; name: string; role: Role },
  ): Promise<queries.MemberRow> {
    const email = requireEmail(input.email);
    if (await queries.selectMemberByEmail(tx, email))
      throw invalidField('email', 'email is already a team member of a merchant', 'unique');
    const now = clock.now();
    const row: queries.MemberRow = {
      id: newId('tm'),
      merchant_id: merchantId,
      email,
      name: input.name.trim() || email,
      role: input.role,
      password_hash: null,
      totp_secret_encrypted: null,
      created_at: now,
      updated_at: now,
    };
    await queries.insertMember(tx, row);
    return row;
  }

  async function manageable(actor: Actor, memberId: string): Promise<queries.MemberRow> {
    const member = await queries.selectMember(db, actor.merchantId, memberId);
    if (!member) throw new DomainError('resource_missing', 'No such team member', { param: 'id' });
    // docs/dashboard.md#roles: an Administrator manages the team, but not the Owner; nobody demotes or removes themselves.
    if (member.role === 'owner' && actor.role !== 'owner')
      throw new DomainError('permission_denied', 'Only the Owner can change the Owner');
    if (member.id === actor.memberId)
      throw new DomainError('permission_denied', 'You cannot change your own role or remove yourself');
    return member;
  }

  const twoFactor = createTwoFactor({ db, clock, vault, signInWindowMs });

  return {
    ...accountActions({ db, clock, twoFactor, audit, openSession }),

    /** The operator's first Owner of a merchant (CLI --owner-email, operator API ownerEmail): a set-password link. */
    async createOwner(tx: Queryable, merchantId: string, email: string): Promise<{ memberId: string; link: string }> {
      const row = await addMember(tx, merchantId, { email, name: email, role: 'owner' });
      return { memberId: row.id, link: await issueLink(tx, row.id, 'invitation') };
    },

    /** Development: the sandbox merchant's Owner, created once, and a fresh one-time sign-in link. */
    async sandboxOwnerLink(merchantId: string, email: string): Promise<string> {
      const link = () =>
        db.transaction(async (tx) => {
          const owner =
            (await queries.selectOwner(tx, merchantId)) ??
            (await addMember(tx, merchantId, { email, name: 'Sandbox owner', role: 'owner' }));
          return issueLink(tx, owner.id, 'sign_in');
        });
      try {
        return await link();
      } catch (err) {
        // Two starts at once on one PostgreSQL: both found no Owner and the other one added it
        // first (the e-mail address is unique). This start finds it now.
        if (!(await queries.selectOwner(db, merchantId))) throw err;
        return link();
      }
    },

    async signIn(email: string, password: string, clientAddress: string): Promise<SignInResult> {
      const now = clock.now();
      const account = `account:${email.trim().toLowerCase()}`;
      const address = `address:${clientAddress}`;
      // Counted before the password is checked (docs/operations.md#topology): attempts sent at once cannot all
      // pass the count, on one process or many. The attempt is a failure unless the password is right.
      const attempt = randomBytes(12).toString('hex');
      const [addressCount, accountCount] = await queries.reserveSignInAttempt(
        db,
        attempt,
        [address, account],
        now,
        new Date(now.getTime() - signInWindowMs),
      );
      // A refused attempt stays counted too: attempts that keep coming keep the lock, and a burst
      // that raced past the count leaves the account locked, not merely unchecked.
      if (addressCount! > maxFailuresPerAddress) return { ok: false, reason: 'address_limited' };
      if (accountCount! > maxFailuresPerAccount) return { ok: false, reason: 'account_locked' };
      const { verify, unknownMemberHash } = await passwords();
      const row = await queries.selectMemberByEmail(db, email.trim());
      const valid = await verify(row?.password_hash ?? unknownMemberHash, password);
      if (!row || !row.password_hash || !valid) return { ok: false, reason: 'invalid' };
      await queries.deleteSignInFailures(db, account);
      await queries.releaseSignInAttempt(db, attempt, [address]);
      if (row.totp_secret_encrypted)
        return { ok: 'code', challenge: await insertLink(db, row.id, 'second_factor', challengeLifetimeMs) };
      // A new session at every sign-in: a session token planted before sign-in is never promoted.
      const sessionToken = await openSession(row.id, clientAddress);
      await audit(
        { merchantId: row.merchant_id, memberId: row.id, role: row.role, mode: 'test', clientAddress },
        'team.signed_in',
        row.id,
      );
      return { ok: true, sessionToken, member: toMember(row) };
    },

    /** The session of a cookie, when it exists and was used within the idle time; its use is noted. */
    async authenticate(sessionToken: string | undefined): Promise<SessionView | null> {
      if (!sessionToken) return null;
      const now = clock.now();
      const found = await queries.selectSession(db, hashKey(sessionToken), new Date(now.getTime() - sessionIdleMs));
      if (!found) return null;
      // Written at most once a minute per session, not on every page.
      if (now.getTime() - new Date(found.last_seen_at).getTime() > 60_000)
        await queries.touchSession(db, found.token_hash, now);
      return {
        tokenHash: found.token_hash,
        csrfToken: found.csrf_token,
        mode: found.mode,
        member: { ...toMember(found.member), merchantId: found.member.merchant_id },
        mustEnrolTwoFactor: found.team_totp_required && found.member.totp_secret_encrypted === null,
      };
    },

    async signOut(session: SessionView): Promise<void> {
      await queries.deleteSession(db, session.tokenHash);
    },

    async signOutEverywhere(actor: Actor): Promise<void> {
      await queries.deleteSessionsOfMember(db, actor.memberId);
      await audit(actor, 'team.signed_out_everywhere', actor.memberId);
    },

    async setMode(session: SessionView, mode: 'test' | 'live'): Promise<void> {
      await queries.updateSessionMode(db, session.tokenHash, mode);
    },

    /** The e-mail a usable link is for (the set-password page shows it), or null. */
    async linkEmail(token: string, kinds: readonly queries.LinkKind[]): Promise<string | null> {
      const link = await queries.selectUsableLink(db, hashKey(token), kinds, clock.now());
      if (!link) return null;
      const rows = await db.query<{ email: string }>('SELECT email FROM team_members WHERE id = $1', [link.member_id]);
      return rows[0]?.email ?? null;
    },

    /** An invitation or reset link sets the password (once) and signs the member in. */
    async setPasswordWithLink(token: string, password: string, clientAddress: string): Promise<string> {
      if (password.length < minPasswordLength)
        throw invalidField('password', `password must be at least ${minPasswordLength} characters`, 'minLength');
      if (password.length > 200) throw invalidField('password', 'password must be at most 200 characters', 'maxLength');
      const passwordHash = await (await passwords()).hash(password);
      const tokenHash = hashKey(token);
      const memberId = await db.transaction(async (tx) => {
        const link = await queries.selectUsableLink(tx, tokenHash, ['invitation', 'password_reset'], clock.now());
        if (!link || !(await queries.markLinkUsed(tx, tokenHash, clock.now()))) return null;
        await queries.updatePassword(tx, link.member_id, passwordHash, clock.now());
        // A new password ends every other session (a reset after a stolen session).
        await queries.deleteSessionsOfMember(tx, link.member_id);
        return link.member_id;
      });
      if (!memberId) throw invalidField('token', 'This link has expired or has been used already', 'expired');
      return openSession(memberId, clientAddress);
    },

    /** Development's one-time sign-in link. */
    async signInWithLink(token: string, clientAddress: string): Promise<string | null> {
      const tokenHash = hashKey(token);
      const memberId = await db.transaction(async (tx) => {
        const link = await queries.selectUsableLink(tx, tokenHash, ['sign_in'], clock.now());
        if (!link || !(await queries.markLinkUsed(tx, tokenHash, clock.now()))) return null;
        return link.member_id;
      });
      return memberId ? openSession(memberId, clientAddress) : null;
    },

    /** The same answer whether or not the address is a member's, so the form reveals no member. */
    async requestPasswordReset(email: string): Promise<void> {
      const row = await queries.selectMemberByEmail(db, email.trim());
      if (!row) return;
      const link = await db.transaction((tx) => issueLink(tx, row.id, 'password_reset'));
      await mail.send({
        to: row.email,
        subject: 'Reset your Tessera dashboard password',
        text: `Someone asked to reset the password of ${row.email}.\n\nSet a new password within 72 hours:\n${link}\n\nIf it was not you, ignore this message.\n`,
      });
    },

    async invite(actor: Actor, input: { email: string; name: string; role: Role }): Promise<Member> {
      if (input.role === 'owner')
        throw invalidField('role', 'role cannot be owner: transfer ownership instead', 'enum');
      const { row, link } = await db.transaction(async (tx) => {
        const added = await addMember(tx, actor.merchantId, input);
        await audit(actor, `team.invited:${input.role}`, added.id, tx);
        return { row: added, link: await issueLink(tx, added.id, 'invitation') };
      });
      await mail.send({
        to: row.email,
        subject: 'You are invited to a Tessera dashboard',
        text: `You are invited as ${roleNames[row.role]}.\n\nChoose a password within 72 hours:\n${link}\n`,
      });
      return toMember(row);
    },

    async changeRole(actor: Actor, memberId: string, role: Role): Promise<void> {
      if (role === 'owner') throw invalidField('role', 'role cannot be owner: transfer ownership instead', 'enum');
      await manageable(actor, memberId);
      await db.transaction(async (tx) => {
        await queries.updateRole(tx, actor.merchantId, memberId, role, clock.now());
        await audit(actor, `team.role_changed:${role}`, memberId, tx);
      });
    },

    async remove(actor: Actor, memberId: string): Promise<void> {
      await manageable(actor, memberId);
      await db.transaction(async (tx) => {
        await queries.markRemoved(tx, actor.merchantId, memberId, clock.now());
        await queries.deleteSessionsOfMember(tx, memberId);
        await audit(actor, 'team.removed', memberId, tx);
      });
    },

    async list(merchantId: string): Promise<Member[]> {
      return (await queries.selectMembers(db, merchantId)).map(toMember);
    },

    /**
     * Re-authentication before a sensitive change (docs/dashboard.md, Balance): the member's password
     * again, counted against the account's sign-in attempts, so it cannot be guessed faster than at sign-in.
     */
    async confirmPassword(actor: Actor, password: string): Promise<boolean> {
      const row = await queries.selectMember(db, actor.merchantId, actor.memberId);
      if (!row?.password_hash) return false;
      const now = clock.now();
      const account = `account:${row.email.trim().toLowerCase()}`;
      const attempt = randomBytes(12).toString('hex');
      const since = new Date(now.getTime() - signInWindowMs);
      const [count] = await queries.reserveSignInAttempt(db, attempt, [account], now, since);
      if (count! > maxFailuresPerAccount) return false;
      if (!(await (await passwords()).verify(row.password_hash, password))) return false;
      await queries.releaseSignInAttempt(db, attempt, [account]);
      return true;
    },

    /** Checks a permission; a refusal is audited (docs/dashboard.md#roles) and thrown as permission_denied. */
    async require(actor: Actor, permission: Permission): Promise<void> {
      if (can(actor.role, permission)) return;
      await audit(actor, `permission.denied:${permission}`, null);
      throw new DomainError('permission_denied', `Your role (${roleNames[actor.role]}) does not allow this`);
    },

    audit,

    async auditLog(merchantId: string): Promise<queries.AuditRow[]> {
      return queries.selectAudit(db, merchantId, 200);
    },
  };
}

export type TeamService = ReturnType<typeof createTeamService>;
