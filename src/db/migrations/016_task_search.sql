-- Searching and sorting a million tasks (docs/rules.md#finding-tasks): keyset indexes for each sort,
-- a word index for `q`, and a change counter that keeps a walk of the pages from meeting a task twice.

-- Every change of a task, by any route, takes the next number: a walk of the list remembers the
-- number it started at and leaves out tasks changed since, which may have moved behind it.
CREATE SEQUENCE task_change_seq;
ALTER TABLE tasks ADD COLUMN change_seq bigint NOT NULL DEFAULT 0;
CREATE FUNCTION task_number_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.change_seq := nextval('task_change_seq');
  RETURN NEW;
END
$$;
CREATE TRIGGER task_number_change BEFORE INSERT OR UPDATE ON tasks
  FOR EACH ROW EXECUTE FUNCTION task_number_change();

-- One index per sort, each ending with the id that breaks ties (the cursor's key).
CREATE INDEX tasks_updated_idx ON tasks (updated_at, id);
-- Tasks without a due date come last: they sort as the day after every other.
CREATE INDEX tasks_due_idx ON tasks ((coalesce(due_date, 'infinity'::date)), id);
-- Most urgent first: urgent 0, high 1, normal 2, low 3.
CREATE INDEX tasks_priority_idx ON tasks (
  (CASE priority WHEN 'urgent' THEN 0 WHEN 'high' THEN 1 WHEN 'normal' THEN 2 ELSE 3 END), id);
CREATE INDEX tasks_status_idx ON tasks (status, id);

-- The words of a task, case folded and unstemmed, for `q`'s prefix search; pg_trgm is not part of
-- the embedded database, full-text search is part of both.
CREATE INDEX tasks_words_idx ON tasks USING gin (to_tsvector('simple', title || ' ' || description));
