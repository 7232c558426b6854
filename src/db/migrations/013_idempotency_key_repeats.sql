-- A key's repeats are free a bounded number of times (docs/rules.md#idempotent-bulk-reassignment):
-- the free repeats a key's row has given, counted where every instance sees them and raised by one
-- statement each, so two repeats at once on two instances cannot both take the last one. A new
-- claim of the key (its row taken over once expired or stale) starts again from zero.
ALTER TABLE idempotency_keys ADD COLUMN free_repeats integer NOT NULL DEFAULT 0;
