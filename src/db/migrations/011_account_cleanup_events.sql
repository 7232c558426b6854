-- Cleaning up an account an attacker held (docs/rules.md#accounts): a new password set for it ends
-- its sessions and forgets its known devices, each a security event of its own. The CHECK list is
-- every type of src/security-event.ts (test/integration/security-event-types.test.ts).
ALTER TABLE security_events DROP CONSTRAINT security_events_type_check;
ALTER TABLE security_events ADD CONSTRAINT security_events_type_check CHECK (
  type IN ('lock-started', 'admin-reset', 'known-device-refused', 'login-pressure-started', 'login-pressure-ended',
           'account-created', 'account-disabled', 'account-enabled', 'password-set',
           'passkey-added', 'passkey-removed', 'passkey-counter-refused',
           'sessions-ended', 'devices-forgotten')
);
