-- Known devices (docs/rules.md#known-devices): a device cookie issued at or before this time is no longer known.
-- An admin reset of the account's login lock sets it to the time of the reset; NULL: none revoked.
ALTER TABLE users ADD COLUMN devices_valid_after timestamptz;
