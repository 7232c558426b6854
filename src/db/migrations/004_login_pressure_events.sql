-- The login path's pressure (docs/rules.md#the-login-gate) is recorded as security events too: one pair per episode.
ALTER TABLE security_events DROP CONSTRAINT security_events_type_check;
ALTER TABLE security_events ADD CONSTRAINT security_events_type_check CHECK (
  type IN ('lock-started', 'admin-reset', 'known-device-refused', 'login-pressure-started', 'login-pressure-ended')
);
