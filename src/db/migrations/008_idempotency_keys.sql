-- Idempotency keys of bulk reassignments (docs/rules.md#idempotent-bulk-reassignment): one row per
-- (caller, key). A row is first an in-flight mark (claim set, response null), committed on its own
-- before the work so every instance sees it; the request's transaction then stores its 200 answer
-- and the request body's fingerprint in the same row, or the mark is deleted when the answer is not
-- a 200. The unique key is what makes two instances racing on one key apply it once.
CREATE TABLE idempotency_keys (
  user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  key text NOT NULL,
  -- A random token per claim: a request whose mark was taken over can no longer store its answer.
  claim text NOT NULL,
  claimed_at timestamptz NOT NULL,
  -- SHA-256 (hex) of the request body's canonical form, and the answer's body as sent: set together.
  fingerprint text,
  response text,
  -- When the row may be purged: the answer's time plus IDEMPOTENCY_TTL (a mark: its claim's).
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (user_id, key)
);
-- The purge deletes the oldest expired rows first, in batches.
CREATE INDEX idempotency_keys_expires_at_idx ON idempotency_keys (expires_at);
