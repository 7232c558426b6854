-- The words of a task kept beside it (docs/rules.md#finding-tasks): a search by words walks a sort's
-- index and tests each row's words, which reading this column does about fifteen times faster than
-- cutting the title and description into words again (BENCHMARKS.md). Adding it rewrites the table
-- once: about 100 s for a million tasks on a busy 2-core machine (migrations have no statement
-- deadline: docs/operations.md).
ALTER TABLE tasks ADD COLUMN words tsvector
  GENERATED ALWAYS AS (to_tsvector('simple', title || ' ' || description)) STORED;
DROP INDEX tasks_words_idx;
CREATE INDEX tasks_words_idx ON tasks USING gin (words);
