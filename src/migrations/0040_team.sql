-- Merchant dashboard (issue 11, docs/dashboard.md#roles): team members, their one-time links, sessions,
-- failed sign-ins, and who did what from where.

-- An e-mail address signs in to one merchant, so it is unique among members not removed.
CREATE TABLE team_members (
  id                     text PRIMARY KEY,
  merchant_id            text NOT NULL REFERENCES merchants (id),
  email                  text NOT NULL,
  name                   text NOT NULL,
  role                   text NOT NULL CHECK (role IN ('owner', 'administrator', 'developer', 'analyst', 'support')),
  -- argon2id (PHC string); null until the member has set a password through a one-time link.
  password_hash          text,
  -- Encrypted by the vault (context = the member id): it must be readable to check a code.
  totp_secret_encrypted  text,
  created_at             timestamptz NOT NULL,
  updated_at             timestamptz NOT NULL,
  removed_at             timestamptz
);
CREATE UNIQUE INDEX team_members_email ON team_members (lower(email)) WHERE removed_at IS NULL;
CREATE INDEX team_members_merchant ON team_members (merchant_id, created_at);

-- Invitations, password resets and sign-in links: only a hash of the token is kept; each is used once.
CREATE TABLE team_links (
  token_hash  text PRIMARY KEY,
  member_id   text NOT NULL REFERENCES team_members (id),
  kind        text NOT NULL CHECK (kind IN ('invitation', 'password_reset', 'sign_in')),
  expires_at  timestamptz NOT NULL,
  used_at     timestamptz,
  created_at  timestamptz NOT NULL
);
CREATE INDEX team_links_member ON team_links (member_id);

-- A session is found by the hash of its cookie; the CSRF token is bound to it.
CREATE TABLE team_sessions (
  token_hash      text PRIMARY KEY,
  member_id       text NOT NULL REFERENCES team_members (id),
  csrf_token      text NOT NULL,
  mode            text NOT NULL CHECK (mode IN ('test', 'live')),
  client_address  text,
  created_at      timestamptz NOT NULL,
  last_seen_at    timestamptz NOT NULL
);
CREATE INDEX team_sessions_member ON team_sessions (member_id);

-- Failed sign-ins within the last window, per account (`account:<e-mail>`) and per client
-- address (`address:<ip>`): the rate limit counts these rows.
CREATE TABLE sign_in_failures (
  subject    text NOT NULL,
  failed_at  timestamptz NOT NULL
);
CREATE INDEX sign_in_failures_subject ON sign_in_failures (subject, failed_at);

ALTER TABLE merchants ADD COLUMN team_totp_required boolean NOT NULL DEFAULT false;

-- "From where": the client address of the request that did it.
ALTER TABLE audit_log ADD COLUMN client_address text;
CREATE INDEX audit_log_merchant_recent ON audit_log (merchant_id, created_at DESC, id DESC);
