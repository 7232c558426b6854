-- Security events (docs/rules.md#known-devices): locks that started, admin resets, refused known-device attempts.
-- Failed logins themselves are not stored one by one; old events are purged after the retention.
CREATE TABLE security_events (
  id bigserial PRIMARY KEY,
  at timestamptz NOT NULL,
  type text NOT NULL CHECK (type IN ('lock-started', 'admin-reset', 'known-device-refused')),
  control text NOT NULL,
  email text,
  address text,
  instance text NOT NULL,
  -- The event outlives the admin who acted: deleting the account keeps the event, unattributed.
  actor_id integer REFERENCES users (id) ON DELETE SET NULL
);
-- Serves both the newest-first keyset pages and the purge of everything before a time.
CREATE INDEX security_events_at_idx ON security_events (at DESC, id DESC);
