-- The route a key was claimed on (`PATCH /api/employee/tasks/bulk`): a key's free repeats are those
-- of its own route (docs/rules.md#idempotent-bulk-reassignment), so a key claimed on a route of the
-- generic budget (a create) buys no free request on the bulk reassignment or the import. A row
-- claimed before has none: its repeats are charged.
ALTER TABLE idempotency_keys ADD COLUMN route text;
