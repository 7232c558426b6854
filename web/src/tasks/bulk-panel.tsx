// Reassigning the selection: the assignee picker, the button, the bulk budget, its countdown, the outcome.
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { Colleague, RateLimitState } from '../../../src/client/index.ts';
import { BULK_APPLIED_ONCE, budgetSentence, duration, FAILURE_REASONS } from '../shared/wording.ts';
import { NamedSelect } from './named-select.tsx';
import type { Outcome as ReassignOutcome } from './reassignment.ts';

interface Props {
  readonly employees: readonly Colleague[];
  readonly selectedCount: number;
  readonly budget: RateLimitState | null;
  /** Seconds until the bulk budget admits again; 0 when it does now. */
  readonly cooldown: number;
  readonly busy: boolean;
  readonly outcome: ReassignOutcome | null;
  readonly error: string | null;
  readonly note: string | null;
  readonly onReassign: (assigneeId: number) => void;
}

export function BulkPanel(props: Props) {
  const { employees, selectedCount, budget, cooldown, busy, outcome, error, note } = props;
  const [assignee, setAssignee] = useState('');
  const outcomeRegion = useRef<HTMLDivElement>(null);
  const errorRegion = useRef<HTMLDivElement>(null);
  const assigneeName = employees.find((e) => String(e.id) === assignee)?.name ?? 'the chosen person';
  const ready = selectedCount > 0 && assignee !== '' && !busy && cooldown === 0;
  const tasks = `${selectedCount} task${selectedCount === 1 ? '' : 's'}`;
  const label = selectedCount === 0 ? 'Reassign' : `Reassign ${tasks}`;

  // The button hands focus to the outcome while it is disabled (data-hand-off); a refusal takes it
  // on to the error, unless the person has moved elsewhere meanwhile.
  useLayoutEffect(() => {
    if (error !== null && document.activeElement === outcomeRegion.current) errorRegion.current?.focus();
  }, [error]);

  const submit = (event: Event) => {
    event.preventDefault();
    if (ready) props.onReassign(Number(assignee));
  };

  return (
    <section class="bulk" aria-labelledby="bulk-title">
      <h2 id="bulk-title">Reassign selected tasks</h2>
      <form class="bulk-controls" onSubmit={submit}>
        <NamedSelect
          id="bulk-assignee"
          label="New assignee"
          emptyChoice="Choose a person"
          choices={employees}
          value={assignee}
          onChange={setAssignee}
        />
        <button
          id="reassign"
          type="submit"
          disabled={!ready}
          aria-describedby="bulk-hint bulk-budget"
          data-hand-off="bulk-outcome"
        >
          {busy ? 'Reassigning…' : label}
        </button>
      </form>
      <p id="bulk-hint" class="hint">
        {selectedCount === 0
          ? 'Select the tasks to reassign in the table.'
          : assignee === ''
            ? 'Choose who gets the selected tasks.'
            : `${selectedCount} selected for ${assigneeName}.`}
      </p>
      <p id="bulk-budget">
        {budget ? budgetSentence(budget) : 'Checking how many bulk reassignments you have left…'}
      </p>
      {cooldown > 0 && (
        <p id="bulk-countdown" role="timer" class="warning">
          Reassigning is paused until your bulk budget refills: you can reassign again in {duration(cooldown)}
          .
        </p>
      )}
      <div id="bulk-error" role="alert" tabIndex={-1} ref={errorRegion}>
        {error && <p class="error">{error}</p>}
      </div>
      <div id="bulk-outcome" role="status" tabIndex={-1} ref={outcomeRegion}>
        {busy && (
          <p>
            Reassigning {tasks} to {assigneeName}…
          </p>
        )}
        {note && <p>{note}</p>}
        {outcome && <Outcome outcome={outcome} />}
      </div>
    </section>
  );
}

function Outcome({ outcome }: { outcome: ReassignOutcome }) {
  // Keyed by position: one id can fail twice (DUPLICATE).
  const failures = outcome.results
    .map((result, position) => ({ ...result, position }))
    .filter((result) => result.status === 'failed');
  return (
    <>
      <p>
        <strong>
          {outcome.succeeded} succeeded, {outcome.failed} failed.
        </strong>{' '}
        {outcome.succeeded > 0 && `Reassigned to ${outcome.assignee}.`}
      </p>
      {outcome.replayed && <p id="bulk-applied-once">{BULK_APPLIED_ONCE}</p>}
      {failures.length > 0 && (
        <ul class="failures">
          {failures.map((failure) => (
            <li key={failure.position}>
              Task {failure.taskId}: {FAILURE_REASONS[failure.reason] ?? failure.reason}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
