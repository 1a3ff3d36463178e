-- Two-factor sign-in with authenticator apps (issue 11): a member's secret being enrolled (shown
-- once, on only after a code confirms it), the last time step a code was accepted for (a code is
-- used once), and the one-time challenge between the password and the code.

ALTER TABLE team_members ADD COLUMN totp_pending_encrypted text;
ALTER TABLE team_members ADD COLUMN totp_last_step bigint;

ALTER TABLE team_links DROP CONSTRAINT team_links_kind_check;
ALTER TABLE team_links ADD CONSTRAINT team_links_kind_check
  CHECK (kind IN ('invitation', 'password_reset', 'sign_in', 'second_factor'));
