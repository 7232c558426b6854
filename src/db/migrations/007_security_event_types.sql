-- Every security-event type of src/security-event.ts (test/integration/security-event-types.test.ts
-- fails when this list and that one drift): 005's account changes and 006's passkeys together.
ALTER TABLE security_events DROP CONSTRAINT security_events_type_check;
ALTER TABLE security_events ADD CONSTRAINT security_events_type_check CHECK (
  type IN ('lock-started', 'admin-reset', 'known-device-refused', 'login-pressure-started', 'login-pressure-ended',
           'account-created', 'account-disabled', 'account-enabled', 'password-set',
           'passkey-added', 'passkey-removed', 'passkey-counter-refused')
);
