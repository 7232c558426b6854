-- Security events about one account are capped per ten-minute window (docs/rules.md#events-about-one-account):
-- past the cap, the repeats of a kind fold into one summary row that counts them.

-- A summary row: `at`, `address`, `instance` are the first folded event's; `repeats` counts the
-- events it stands for, `last_at` is the latest one's time, `addresses` the first few distinct
-- addresses (`more_addresses`: some came from others too), `summary_window` the start of its
-- window. An event stored as its own row has all five NULL.
ALTER TABLE security_events ADD COLUMN repeats integer;
ALTER TABLE security_events ADD COLUMN last_at timestamptz;
ALTER TABLE security_events ADD COLUMN addresses text[];
ALTER TABLE security_events ADD COLUMN more_addresses boolean;
ALTER TABLE security_events ADD COLUMN summary_window timestamptz;
-- One summary per account, window, kind, control and actor: a repeat finds its row by this key.
CREATE UNIQUE INDEX security_events_summary_key
  ON security_events (email, summary_window, type, control, (coalesce(actor_id, 0)))
  WHERE summary_window IS NOT NULL;

-- Per account and window: how many of its events have a row of their own, and of which kinds.
-- The row is the lock that makes the cap exact: every event about the account takes it (an upsert)
-- in the transaction that stores the event, so two sign-ins at once cannot both be the 100th.
-- `kept` is the fate of the last event counted, read back by the same upsert's RETURNING.
CREATE TABLE security_event_windows (
  email text NOT NULL,
  window_start timestamptz NOT NULL,
  stored integer NOT NULL,
  kinds text[] NOT NULL,
  kept boolean NOT NULL,
  PRIMARY KEY (email, window_start)
);
-- The purge of windows long over.
CREATE INDEX security_event_windows_start_idx ON security_event_windows (window_start);

-- Every insert into security_events passes here (the batched log, an account change's transaction,
-- the sign-in's single statement): no write path can forget the cap. The numbers are
-- EVENTS_PER_WINDOW, EVENT_WINDOW_MS and SUMMARY_ADDRESSES of src/security-event.ts
-- (test/http/security-event-cap.test.ts fails when they drift).
CREATE FUNCTION security_events_cap() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  this_window timestamptz;
  own_row boolean;
BEGIN
  -- Events about no account (an address's lock, the login path's pressure) and the summaries
  -- themselves are stored as they come.
  IF NEW.email IS NULL OR NEW.summary_window IS NOT NULL THEN
    RETURN NEW;
  END IF;
  this_window := to_timestamp(floor(extract(epoch FROM NEW.at) / 600) * 600);
  -- Its own row while the window has stored fewer than 100, and always for the first of its kind.
  INSERT INTO security_event_windows AS w (email, window_start, stored, kinds, kept)
  VALUES (NEW.email, this_window, 1, ARRAY[NEW.type], true)
  ON CONFLICT (email, window_start) DO UPDATE SET
    kept = w.stored < 100 OR NOT (NEW.type = ANY (w.kinds)),
    stored = w.stored + CASE WHEN w.stored < 100 OR NOT (NEW.type = ANY (w.kinds)) THEN 1 ELSE 0 END,
    kinds = CASE WHEN NEW.type = ANY (w.kinds) THEN w.kinds ELSE w.kinds || NEW.type END
  RETURNING kept INTO own_row;
  IF own_row THEN
    RETURN NEW;
  END IF;
  INSERT INTO security_events AS s
    (at, type, control, email, address, instance, actor_id, repeats, last_at, addresses, more_addresses, summary_window)
  VALUES (NEW.at, NEW.type, NEW.control, NEW.email, NEW.address, NEW.instance, NEW.actor_id, 1, NEW.at,
          CASE WHEN NEW.address IS NULL THEN ARRAY[]::text[] ELSE ARRAY[NEW.address] END, false, this_window)
  ON CONFLICT (email, summary_window, type, control, (coalesce(actor_id, 0))) WHERE summary_window IS NOT NULL
  DO UPDATE SET
    repeats = s.repeats + 1,
    last_at = greatest(s.last_at, EXCLUDED.last_at),
    addresses = CASE
      WHEN EXCLUDED.address IS NULL OR EXCLUDED.address = ANY (s.addresses) OR cardinality(s.addresses) >= 5
        THEN s.addresses
      ELSE s.addresses || EXCLUDED.address
    END,
    more_addresses = s.more_addresses OR (EXCLUDED.address IS NOT NULL
      AND NOT (EXCLUDED.address = ANY (s.addresses)) AND cardinality(s.addresses) >= 5);
  -- Folded: the event itself is not stored.
  RETURN NULL;
END
$$;

CREATE TRIGGER security_events_cap BEFORE INSERT ON security_events
  FOR EACH ROW EXECUTE FUNCTION security_events_cap();
