-- docs/decisions/0014-legacy-opt-in-and-sequence.md, docs/decisions/0028-legacy-default-for-existing-merchants.md: the dynamic notifyUrl
-- endpoint is created on first use, so 0111's column default alone gave it legacy notifications
-- off even for merchants that existed before the opt-in. Each merchant now carries the value its
-- dynamic endpoint starts with: true for every merchant existing when this runs (as if the endpoint
-- had existed then), false for merchants created from now on. Rows already made are not changed.
ALTER TABLE merchants ADD COLUMN legacy_notifications_default boolean NOT NULL DEFAULT true;
ALTER TABLE merchants ALTER COLUMN legacy_notifications_default SET DEFAULT false;
