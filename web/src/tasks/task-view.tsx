// A task's own view (#task/42): its fields edited under If-Match, a 412 explained and applied over, its
// history.
import type { RefObject } from 'preact';
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { type ApiClient, type HistoryEntry, isApiError, type Task } from '../../../src/client/index.ts';
import { useFocusHandOff, useFocusOnShow } from '../shared/focus-hand-off.ts';
import { Outcome, Problem } from '../shared/live-regions.tsx';
import { LoadTroubleBanners } from '../shared/load-trouble-banners.tsx';
import { useDocumentTitle } from '../shared/page-title.ts';
import { VIEW_HASHES } from '../shared/portal-view.ts';
import { useLoadTrouble } from '../shared/use-load-trouble.ts';
import {
  changedFields,
  changedTask,
  clashes,
  type Draft,
  differences,
  draftOf,
  EDITED_FIELDS,
  type EditedField,
  entriesSince,
  etagOf,
  type FieldChange,
  isOverdue,
  localToday,
  rebase,
  refusedField,
} from './task-edit.ts';
import { TaskFormFields, useTaskFields } from './task-form-fields.tsx';
import {
  changeWords,
  describeTaskError,
  FIELD_LABELS,
  FIELD_PROBLEMS,
  type Names,
  OVERDUE,
  SOURCE_LABELS,
  valueWords,
  when,
} from './task-wording.ts';
import { useNamedList } from './use-named-list.ts';

interface Props {
  readonly client: ApiClient;
  readonly taskId: number;
  readonly onSignedOut: (notice: string) => void;
}

/** What a save met when someone else had changed the task since it was loaded. */
interface Conflict {
  /** Their entries since the version loaded, newest first (empty when the history could not be read). */
  readonly entries: readonly HistoryEntry[];
  /** The fields that differ between the version loaded and the one now. */
  readonly changes: readonly FieldChange[];
  /** Fields both changed to different values: the person's value wins when applied. */
  readonly clashes: readonly EditedField[];
}

export function TaskView({ client, taskId, onSignedOut }: Props) {
  const heading = useRef<HTMLHeadingElement>(null);
  const section = useRef<HTMLElement>(null);
  const outcomeRef = useRef<HTMLParagraphElement>(null);
  const conflictRef = useRef<HTMLHeadingElement>(null);
  useFocusOnShow(heading);
  useFocusHandOff(section, heading);
  useDocumentTitle(`Task ${taskId}`);
  const trouble = useLoadTrouble(onSignedOut);
  const { items: people, names: peopleNames } = useNamedList(client, 'employees', trouble);
  const { items: clients, names: clientNames } = useNamedList(client, 'clients', trouble);
  const names: Names = useMemo(
    () => ({ people: peopleNames, clients: clientNames }),
    [peopleNames, clientNames],
  );

  const [loaded, setLoaded] = useState<{ task: Task; etag: string } | null>(null);
  const form = useTaskFields<Draft | null>(null);
  const { draft, setDraft, setProblem } = form;
  const [loadError, setLoadError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const [outcome, setOutcome] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [conflict, setConflict] = useState<Conflict | null>(null);
  const [history, setHistory] = useState<{ entries: readonly HistoryEntry[]; next: string | null } | null>(
    null,
  );
  const [historyBusy, setHistoryBusy] = useState(false);
  const [reloads, setReloads] = useState(0);
  const { report, resumed } = trouble;

  const signedOut = useCallback(
    (failure: unknown) => {
      if (!isApiError(failure, 'UNAUTHENTICATED')) return false;
      onSignedOut('Your session has ended. Sign in again.');
      return true;
    },
    [onSignedOut],
  );

  // Only the latest history request is shown: a save's reload can overtake an earlier one.
  const historyRequest = useRef(0);
  const loadHistory = useCallback(async () => {
    const request = ++historyRequest.current;
    setHistoryBusy(true);
    try {
      const page = await client.taskHistory(taskId);
      if (request === historyRequest.current) setHistory({ entries: page.entries, next: page.nextCursor });
    } catch (failure) {
      if (request === historyRequest.current && !signedOut(failure)) setError(describeTaskError(failure));
    } finally {
      if (request === historyRequest.current) setHistoryBusy(false);
    }
  }, [client, taskId, signedOut]);

  useEffect(() => {
    let current = true;
    setLoaded(null);
    client.getTask(taskId).then(
      (answer) => {
        if (!current) return;
        setLoaded(answer);
        setDraft(draftOf(answer.task));
      },
      (failure: unknown) => {
        if (!current) return;
        // No such task is this view's own news; a rate limit, the database away or the session gone
        // are every page's (a pause with its countdown, then this loads again).
        if (isApiError(failure, 'NOT_FOUND')) setLoadError(describeTaskError(failure));
        else report(failure);
      },
    );
    void loadHistory();
    return () => {
      current = false;
    };
    // `resumed` and `reloads`: the end of a pause, or Try again, loads it again.
  }, [client, taskId, loadHistory, report, resumed, reloads]);

  // A conflict takes focus to its explanation (a refused field takes it too: useTaskFields).
  useLayoutEffect(() => {
    if (conflict) conflictRef.current?.focus();
  }, [conflict]);

  const loadMore = async () => {
    if (!history?.next || historyBusy) return;
    const request = ++historyRequest.current;
    setHistoryBusy(true);
    try {
      const page = await client.taskHistory(taskId, history.next);
      if (request === historyRequest.current)
        setHistory({ entries: [...history.entries, ...page.entries], next: page.nextCursor });
    } catch (failure) {
      if (request === historyRequest.current && !signedOut(failure)) setError(describeTaskError(failure));
    } finally {
      if (request === historyRequest.current) setHistoryBusy(false);
    }
  };

  const save = async (event?: Event) => {
    event?.preventDefault();
    if (!loaded || !draft || saving) return;
    const fields = changedFields(loaded.task, draft);
    setProblem(null);
    setError(null);
    if (Object.keys(fields).length === 0) {
      // After a conflict, the other person may have made the very same changes.
      setOutcome(
        conflict
          ? 'Nothing to save: the task already has every change you made.'
          : 'Nothing to save: no field differs from the task as loaded.',
      );
      setConflict(null);
      queueMicrotask(() => outcomeRef.current?.focus());
      return;
    }
    if (draft.title.trim() === '') {
      setProblem({ field: 'title', text: 'Give the task a title.' });
      return;
    }
    setSaving(true);
    setOutcome(null);
    try {
      const saved = await client.editTask(taskId, fields, loaded.etag);
      const said = differences(loaded.task, saved.task).map((item) => changeWords(item, names));
      setLoaded(saved);
      setDraft(draftOf(saved.task));
      setConflict(null);
      setOutcome(`Saved. ${said.join('; ')}.`);
      // Focus moves to what happened: the Save button stays, but the person hears the outcome.
      queueMicrotask(() => outcomeRef.current?.focus());
      void loadHistory();
    } catch (failure) {
      if (signedOut(failure)) return;
      const current = changedTask(failure);
      if (current) {
        // Someone else saved first: say who changed what, keep every typed value, and rebase the
        // form on their version so that one press applies only this person's changes over it.
        let entries: readonly HistoryEntry[] = [];
        try {
          entries = entriesSince(loaded.task, current, (await client.taskHistory(taskId)).entries);
        } catch {
          // The fields compared below still say what changed.
        }
        setConflict({
          entries,
          changes: differences(loaded.task, current),
          clashes: clashes(loaded.task, draft, current),
        });
        setDraft(rebase(loaded.task, draft, current));
        setLoaded({ task: current, etag: etagOf(current) });
        void loadHistory();
      } else {
        const field = refusedField(failure);
        if (field)
          setProblem({
            field,
            text: isApiError(failure, 'VALIDATION_ERROR')
              ? FIELD_PROBLEMS[field]
              : describeTaskError(failure),
          });
        else setError(describeTaskError(failure));
      }
    } finally {
      setSaving(false);
    }
  };

  const edited = useMemo(() => {
    if (!loaded || !draft) return new Set<EditedField>();
    const fields = changedFields(loaded.task, draft);
    return new Set(EDITED_FIELDS.filter((field) => field in fields));
  }, [loaded, draft]);

  const title = loaded ? `Task ${taskId}: ${loaded.task.title}` : `Task ${taskId}`;
  return (
    <section aria-labelledby="task-title" ref={section} class="task-view">
      <p>
        <a href={VIEW_HASHES.tasks}>Back to the task list</a>
      </p>
      <h1 id="task-title" tabIndex={-1} ref={heading}>
        {title}
      </h1>
      {loadError && (
        <p class="banner error" role="alert">
          {loadError}
        </p>
      )}
      <LoadTroubleBanners trouble={trouble} what="The task" onRetry={() => setReloads((n) => n + 1)} />
      {!loaded || !draft ? (
        !loadError && !trouble.error && !trouble.pause && <p aria-busy="true">Loading the task…</p>
      ) : (
        <>
          <p class="hint">
            {isOverdue(loaded.task, localToday()) && <strong class="overdue">{OVERDUE}. </strong>}
            Version {loaded.task.version}, last changed {when(loaded.task.updatedAt)}. Created{' '}
            {when(loaded.task.createdAt)}.
          </p>
          {conflict && (
            <ConflictPanel
              conflict={conflict}
              names={names}
              headingRef={conflictRef}
              saving={saving}
              onApply={save}
            />
          )}
          <form onSubmit={save} class="task-form" id="task-form">
            <TaskFormFields
              prefix="task-field"
              form={form}
              people={people}
              clients={clients}
              fields={EDITED_FIELDS}
              changed={edited}
            />
            <Problem id="task-problem" text={error} />
            <div class="form-actions">
              <button type="submit" id="task-save" aria-disabled={saving ? 'true' : undefined}>
                {saving ? 'Saving…' : 'Save'}
              </button>
            </div>
            <Outcome id="task-outcome" text={outcome} outcomeRef={outcomeRef} />
          </form>
          <section class="panel" aria-labelledby="history-title">
            <h2 id="history-title">History</h2>
            <History history={history} names={names} busy={historyBusy} onMore={() => void loadMore()} />
          </section>
        </>
      )}
    </section>
  );
}

/** Who changed what since the person loaded the task, and the one button that applies theirs over it. */
function ConflictPanel({
  conflict,
  names,
  headingRef,
  saving,
  onApply,
}: {
  conflict: Conflict;
  names: Names;
  headingRef: RefObject<HTMLHeadingElement | null>;
  saving: boolean;
  onApply: () => void;
}) {
  return (
    <section class="panel conflict" aria-labelledby="conflict-title" id="task-conflict">
      <h2 id="conflict-title" tabIndex={-1} ref={headingRef}>
        Someone else changed this task while you were editing it
      </h2>
      {conflict.entries.length > 0 ? (
        <ul>
          {conflict.entries.map((entry) => (
            <li key={entry.id}>
              {entry.actor?.name ?? 'Someone'} ({SOURCE_LABELS[entry.source]}, {when(entry.at)}):{' '}
              {entry.changes.map((item) => changeWords(item, names)).join('; ')}.
            </li>
          ))}
        </ul>
      ) : (
        <ul>
          {conflict.changes.map((item) => (
            <li key={item.field}>{changeWords(item, names)}.</li>
          ))}
        </ul>
      )}
      <p>
        Nothing you typed is lost: the form below keeps your changes and now shows their other changes.
        {conflict.clashes.length > 0 &&
          ` You both changed ${conflict.clashes.map((field) => FIELD_LABELS[field]).join(', ')}: applying puts your value in place of theirs.`}
      </p>
      <button type="button" id="conflict-apply" aria-disabled={saving ? 'true' : undefined} onClick={onApply}>
        Apply my changes over theirs
      </button>
    </section>
  );
}

function History({
  history,
  names,
  busy,
  onMore,
}: {
  history: { entries: readonly HistoryEntry[]; next: string | null } | null;
  names: Names;
  busy: boolean;
  onMore: () => void;
}) {
  if (history === null) return busy ? <p>Loading the history…</p> : null;
  return (
    <>
      <ol class="history" id="task-history">
        {history.entries.map((entry) => (
          <li key={entry.id} data-history-source={entry.source}>
            <p>
              <strong>{entry.actor?.name ?? 'No account'}</strong> {SOURCE_LABELS[entry.source]} it,{' '}
              <time dateTime={entry.at}>{when(entry.at)}</time>
            </p>
            <ul>
              {entry.changes.map((item) => (
                <li key={item.field}>
                  {entry.source === 'create' || entry.source === 'import'
                    ? `${FIELD_LABELS[item.field as EditedField] ?? item.field}: ${valueWords(item.field, item.to, names)}`
                    : changeWords(item, names)}
                </li>
              ))}
            </ul>
          </li>
        ))}
      </ol>
      {history.next && (
        <button type="button" class="secondary" aria-disabled={busy ? 'true' : undefined} onClick={onMore}>
          Load more
        </button>
      )}
    </>
  );
}
