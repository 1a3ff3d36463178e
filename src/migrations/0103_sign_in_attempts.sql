-- Sign-in and code lockouts counted before the password or code is checked (docs/decisions/0011-shared-rate-limits.md): each
-- attempt is written first, as a failure, and is named so that it can be taken back when it turns
-- out right or is refused unchecked.
ALTER TABLE sign_in_failures ADD COLUMN attempt_id text;
