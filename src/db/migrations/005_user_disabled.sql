-- Accounts for a real deployment (docs/rules.md#running-it): an account can be disabled (not deleted, so its
-- tasks and events keep their author), and account changes are security events.
ALTER TABLE users ADD COLUMN disabled_at timestamptz;
ALTER TABLE security_events DROP CONSTRAINT security_events_type_check;
ALTER TABLE security_events ADD CONSTRAINT security_events_type_check CHECK (
  type IN ('lock-started', 'admin-reset', 'known-device-refused', 'login-pressure-started', 'login-pressure-ended',
           'account-created', 'account-disabled', 'account-enabled', 'password-set')
);
