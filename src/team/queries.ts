import type { Queryable } from '../db/db.js';
import type { Role } from './permissions.js';

export interface MemberRow {
  id: string;
  merchant_id: string;
  email: string;
  name: string;
  role: Role;
  password_hash: string | null;
  totp_secret_encrypted: string | null;
  /** A secret being enrolled: on only once a code confirms it (two-factor.ts). */
  totp_pending_encrypted?: string | null;
  created_at: Date;
  updated_at: Date;
}

const insertColumns =
  'id, merchant_id, email, name, role, password_hash, totp_secret_encrypted, created_at, updated_at';
const memberColumns = `${insertColumns}, totp_pending_encrypted`;

export async function insertMember(db: Queryable, row: MemberRow): Promise<void> {
  await db.query(`INSERT INTO team_members (${insertColumns}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, [
    row.id,
    row.merchant_id,
    row.email,
    row.name,
    row.role,
    row.password_hash,
    row.totp_secret_encrypted,
    row.created_at,
    row.updated_at,
  ]);
}

export async function selectMemberByEmail(db: Queryable, email: string): Promise<MemberRow | undefined> {
  const rows = await db.query<MemberRow>(
    `SELECT ${memberColumns} FROM team_members WHERE lower(email) = lower($1) AND removed_at IS NULL`,
    [email],
  );
  return rows[0];
}

export async function selectMember(db: Queryable, merchantId: string, id: string): Promise<MemberRow | undefined> {
  const rows = await db.query<MemberRow>(
    `SELECT ${memberColumns} FROM team_members WHERE id = $1 AND merchant_id = $2 AND removed_at IS NULL`,
    [id, merchantId],
  );
  return rows[0];
}

export async function selectMemberById(db: Queryable, id: string): Promise<MemberRow | undefined> {
  const rows = await db.query<MemberRow>(
    `SELECT ${memberColumns} FROM team_members WHERE id = $1 AND removed_at IS NULL`,
    [id],
  );
  return rows[0];
}

export async function selectMembers(db: Queryable, merchantId: string): Promise<MemberRow[]> {
  return db.query<MemberRow>(
    `SELECT ${memberColumns} FROM team_members WHERE merchant_id = $1 AND removed_at IS NULL ORDER BY created_at, id`,
    [merchantId],
  );
}

export async function selectOwner(db: Queryable, merchantId: string): Promise<MemberRow | undefined> {
  const rows = await db.query<MemberRow>(
    `SELECT ${memberColumns} FROM team_members
      WHERE merchant_id = $1 AND role = 'owner' AND removed_at IS NULL ORDER BY created_at LIMIT 1`,
    [merchantId],
  );
  return rows[0];
}

export async function updateRole(db: Queryable, merchantId: string, id: string, role: Role, now: Date) {
  const rows = await db.query(
    `UPDATE team_members SET role = $3, updated_at = $4
      WHERE id = $1 AND merchant_id = $2 AND removed_at IS NULL RETURNING id`,
    [id, merchantId, role, now],
  );
  return rows.length === 1;
}

export async function markRemoved(db: Queryable, merchantId: string, id: string, now: Date): Promise<boolean> {
  const rows = await db.query(
    `UPDATE team_members SET removed_at = $3, updated_at = $3
      WHERE id = $1 AND merchant_id = $2 AND removed_at IS NULL RETURNING id`,
    [id, merchantId, now],
  );
  return rows.length === 1;
}

export async function updatePassword(db: Queryable, id: string, passwordHash: string, now: Date): Promise<void> {
  await db.query('UPDATE team_members SET password_hash = $2, updated_at = $3 WHERE id = $1', [id, passwordHash, now]);
}

// ── Two-factor sign-in ────────────────────────────────────────────────────────────────────────

export async function updateTotpPending(db: Queryable, id: string, encrypted: string, now: Date): Promise<void> {
  await db.query('UPDATE team_members SET totp_pending_encrypted = $2, updated_at = $3 WHERE id = $1', [
    id,
    encrypted,
    now,
  ]);
}

/** The pending secret becomes the member's, only if it is still the one the code was checked against. */
export async function confirmTotp(db: Queryable, id: string, encrypted: string, now: Date): Promise<boolean> {
  const rows = await db.query(
    `UPDATE team_members SET totp_secret_encrypted = totp_pending_encrypted, totp_pending_encrypted = NULL,
            updated_at = $3
      WHERE id = $1 AND totp_pending_encrypted = $2 RETURNING id`,
    [id, encrypted, now],
  );
  return rows.length === 1;
}

export async function clearTotp(db: Queryable, id: string, now: Date): Promise<void> {
  await db.query(
    `UPDATE team_members SET totp_secret_encrypted = NULL, totp_pending_encrypted = NULL, updated_at = $2
      WHERE id = $1`,
    [id, now],
  );
}

/** A code's time step is used once: only a step after the last accepted one matches. */
export async function useTotpStep(db: Queryable, id: string, step: number): Promise<boolean> {
  const rows = await db.query(
    `UPDATE team_members SET totp_last_step = $2
      WHERE id = $1 AND (totp_last_step IS NULL OR totp_last_step < $2) RETURNING id`,
    [id, step],
  );
  return rows.length === 1;
}

export async function selectTeamTotpRequired(db: Queryable, merchantId: string): Promise<boolean> {
  const rows = await db.query<{ team_totp_required: boolean }>(
    'SELECT team_totp_required FROM merchants WHERE id = $1',
    [merchantId],
  );
  return rows[0]?.team_totp_required === true;
}

export async function updateTeamTotpRequired(db: Queryable, merchantId: string, required: boolean): Promise<void> {
  await db.query('UPDATE merchants SET team_totp_required = $2 WHERE id = $1', [merchantId, required]);
}

/** Ownership moves in one statement pair inside the caller's transaction; each update is conditional. */
export async function demoteOwner(db: Queryable, merchantId: string, id: string, now: Date): Promise<boolean> {
  const rows = await db.query(
    `UPDATE team_members SET role = 'administrator', updated_at = $3
      WHERE id = $1 AND merchant_id = $2 AND role = 'owner' AND removed_at IS NULL RETURNING id`,
    [id, merchantId, now],
  );
  return rows.length === 1;
}

export async function promoteToOwner(db: Queryable, merchantId: string, id: string, now: Date): Promise<boolean> {
  const rows = await db.query(
    `UPDATE team_members SET role = 'owner', updated_at = $3
      WHERE id = $1 AND merchant_id = $2 AND role <> 'owner' AND removed_at IS NULL
        AND password_hash IS NOT NULL RETURNING id`,
    [id, merchantId, now],
  );
  return rows.length === 1;
}

// ── One-time links ────────────────────────────────────────────────────────────────────────────

export type LinkKind = 'invitation' | 'password_reset' | 'sign_in' | 'second_factor';

export async function insertLink(
  db: Queryable,
  link: { tokenHash: string; memberId: string; kind: LinkKind; expiresAt: Date; now: Date },
): Promise<void> {
  await db.query(
    'INSERT INTO team_links (token_hash, member_id, kind, expires_at, created_at) VALUES ($1, $2, $3, $4, $5)',
    [link.tokenHash, link.memberId, link.kind, link.expiresAt, link.now],
  );
}

/** A link not used and not expired, of one of `kinds`; the member must still be on the team. */
export async function selectUsableLink(db: Queryable, tokenHash: string, kinds: readonly LinkKind[], now: Date) {
  const rows = await db.query<{ member_id: string; kind: LinkKind }>(
    `SELECT l.member_id, l.kind FROM team_links l JOIN team_members m ON m.id = l.member_id
      WHERE l.token_hash = $1 AND l.kind = ANY($2) AND l.used_at IS NULL AND l.expires_at > $3
        AND m.removed_at IS NULL`,
    [tokenHash, kinds, now],
  );
  return rows[0];
}

/** Single use: of two requests with the same link, only the one whose update matched goes on. */
export async function markLinkUsed(db: Queryable, tokenHash: string, now: Date): Promise<boolean> {
  const rows = await db.query(
    `UPDATE team_links SET used_at = $2 WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING token_hash`,
    [tokenHash, now],
  );
  return rows.length === 1;
}

// ── Sessions ──────────────────────────────────────────────────────────────────────────────────

export interface SessionRow {
  token_hash: string;
  member_id: string;
  csrf_token: string;
  mode: 'test' | 'live';
  last_seen_at: Date;
}

export async function insertSession(
  db: Queryable,
  session: { tokenHash: string; memberId: string; csrfToken: string; clientAddress: string; now: Date },
): Promise<void> {
  await db.query(
    `INSERT INTO team_sessions (token_hash, member_id, csrf_token, mode, client_address, created_at, last_seen_at)
     VALUES ($1, $2, $3, 'test', $4, $5, $5)`,
    [session.tokenHash, session.memberId, session.csrfToken, session.clientAddress, session.now],
  );
}

/** The session and its member, when the session was seen after `idleSince` and the member is on the team. */
export async function selectSession(db: Queryable, tokenHash: string, idleSince: Date) {
  const rows = await db.query<SessionRow & { member: MemberRow; team_totp_required: boolean }>(
    `SELECT s.token_hash, s.member_id, s.csrf_token, s.mode, s.last_seen_at, row_to_json(m) AS member,
            mc.team_totp_required
       FROM team_sessions s JOIN team_members m ON m.id = s.member_id JOIN merchants mc ON mc.id = m.merchant_id
      WHERE s.token_hash = $1 AND s.last_seen_at > $2 AND m.removed_at IS NULL`,
    [tokenHash, idleSince],
  );
  return rows[0];
}

export async function touchSession(db: Queryable, tokenHash: string, now: Date): Promise<void> {
  await db.query('UPDATE team_sessions SET last_seen_at = $2 WHERE token_hash = $1', [tokenHash, now]);
}

export async function updateSessionMode(db: Queryable, tokenHash: string, mode: 'test' | 'live'): Promise<void> {
  await db.query('UPDATE team_sessions SET mode = $2 WHERE token_hash = $1', [tokenHash, mode]);
}

export async function deleteSession(db: Queryable, tokenHash: string): Promise<void> {
  await db.query('DELETE FROM team_sessions WHERE token_hash = $1', [tokenHash]);
}

export async function deleteSessionsOfMember(db: Queryable, memberId: string): Promise<void> {
  await db.query('DELETE FROM team_sessions WHERE member_id = $1', [memberId]);
}

// ── Sign-in rate limit ────────────────────────────────────────────────────────────────────────

/**
 * docs/operations.md#topology: an attempt is written as a failure of each subject before the password or code is
 * checked, and committed; only then are the subjects' failures counted. Each attempt's count
 * includes itself and every attempt written before it, so however many arrive at once, on however
 * many processes, at most `limit` of them find the count within the limit and are checked.
 * Answers each subject's failures in the window, this attempt included.
 */
export async function reserveSignInAttempt(
  db: Queryable,
  attemptId: string,
  subjects: readonly string[],
  now: Date,
  since: Date,
): Promise<number[]> {
  await db.query(
    'INSERT INTO sign_in_failures (subject, failed_at, attempt_id) SELECT subject, $2, $3 FROM unnest($1::text[]) AS s (subject)',
    [subjects, now, attemptId],
  );
  const rows = await db.query<{ subject: string; count: string | number }>(
    `SELECT s.subject, (SELECT count(*) FROM sign_in_failures f WHERE f.subject = s.subject AND f.failed_at > $2) AS count
     FROM unnest($1::text[]) AS s (subject)`,
    [subjects, since],
  );
  return subjects.map((subject) => Number(rows.find((row) => row.subject === subject)?.count ?? 0));
}

/** Takes an attempt back from the subjects given (it was right, or refused without a check). */
export async function releaseSignInAttempt(
  db: Queryable,
  attemptId: string,
  subjects: readonly string[],
): Promise<void> {
  await db.query('DELETE FROM sign_in_failures WHERE attempt_id = $1 AND subject = ANY($2::text[])', [
    attemptId,
    subjects,
  ]);
}

export async function deleteSignInFailures(db: Queryable, subject: string): Promise<void> {
  await db.query('DELETE FROM sign_in_failures WHERE subject = $1', [subject]);
}

// ── Audit log ─────────────────────────────────────────────────────────────────────────────────

export interface AuditRow {
  id: string;
  mode: string;
  action: string;
  object_id: string | null;
  actor: string;
  client_address: string | null;
  created_at: Date;
}

export async function insertAudit(
  db: Queryable,
  entry: {
    merchantId: string;
    mode: string;
    action: string;
    objectId: string | null;
    actor: string;
    clientAddress: string | null;
    now: Date;
  },
): Promise<void> {
  await db.query(
    `INSERT INTO audit_log (merchant_id, mode, action, object_id, actor, client_address, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [entry.merchantId, entry.mode, entry.action, entry.objectId, entry.actor, entry.clientAddress, entry.now],
  );
}

export async function selectAudit(db: Queryable, merchantId: string, limit: number): Promise<AuditRow[]> {
  return db.query<AuditRow>(
    `SELECT id::text AS id, mode, action, object_id, actor, client_address, created_at FROM audit_log
      WHERE merchant_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`,
    [merchantId, limit],
  );
}
