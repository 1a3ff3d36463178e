-- The merchant's website origins (issue 14): the pages that may frame Tessera's card field
-- (tessera.js), as origins (`https://shop.example`, scheme + host + optional port), listed in the
-- card frame's Content-Security-Policy frame-ancestors. Empty: no page may (in production).
ALTER TABLE merchants ADD COLUMN website_origins jsonb NOT NULL DEFAULT '[]'::jsonb;
