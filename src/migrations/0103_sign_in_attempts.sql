-- Sign-in and code lockouts counted before the password or code is checked (DESIGN §11): each
-- attempt is written first, as a failure, and is named so that it can be taken back when it turns
-- out right or is refused unchecked.
ALTER TABLE sign_in_failures ADD COLUMN attempt_id text;
