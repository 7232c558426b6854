// The Tasks page: filtered, paged tasks, a selection of up to 50, and bulk reassignment within its budget.
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import {
  type ApiClient,
  type BulkReassignResult,
  isApiError,
  type RateLimitState,
  type Task,
  type TaskPage,
  type User,
} from '../../src/client/index.ts';
import { BulkPanel } from './bulk-panel.tsx';
import { exhaustedUntil, retryDeadline } from './deadline.ts';
import { headerState, MAX_SELECTED, selectPage, unselectPage } from './selection.ts';
import { type Filters, TaskFilters } from './task-filters.tsx';
import { TaskTable } from './task-table.tsx';
import { useCountdown } from './use-countdown.ts';
import { describeError, duration } from './wording.ts';

interface Props {
  readonly client: ApiClient;
  readonly user: User;
  /** The session is gone: back to the Login page with this notice. */
  readonly onSignedOut: (notice: string) => void;
}

/** Which page to show: the filters, and the cursor of every page up to the current one (for Previous). */
interface Position {
  readonly filters: Filters;
  readonly cursors: readonly (string | undefined)[];
}

export function TasksPage({ client, user, onSignedOut }: Props) {
  const [employees, setEmployees] = useState<readonly User[]>([]);
  const [position, setPosition] = useState<Position>({ filters: { limit: 50 }, cursors: [undefined] });
  const [page, setPage] = useState<TaskPage | null>(null);
  const [loading, setLoading] = useState(true);
  const [loadError, setLoadError] = useState<string | null>(null);
  // A generic-budget 429: the page keeps what it shows and waits, instead of breaking.
  const [pause, setPause] = useState<{ text: string; until: number } | null>(null);
  const [selected, setSelected] = useState<ReadonlySet<number>>(new Set());
  const [selectionNote, setSelectionNote] = useState<string | null>(null);
  const [budget, setBudget] = useState<RateLimitState | null>(null);
  const [cooldownUntil, setCooldownUntil] = useState<number | null>(null);
  const [bulkBusy, setBulkBusy] = useState(false);
  const [outcome, setOutcome] = useState<(BulkReassignResult & { assignee: string }) | null>(null);
  const [bulkError, setBulkError] = useState<string | null>(null);
  const [bulkNote, setBulkNote] = useState<string | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  const pauseLeft = useCountdown(pause?.until ?? null);
  const cooldown = useCountdown(cooldownUntil);
  const names = useMemo(() => new Map(employees.map((e) => [e.id, e.name])), [employees]);

  /** Sorts a failed load into: session gone, paused by a rate limit, or an error to show. */
  const failed = useCallback(
    (error: unknown) => {
      if (isApiError(error, 'UNAUTHENTICATED')) return onSignedOut(describeError(error));
      const until = isApiError(error) && error.status === 429 ? retryDeadline(error) : null;
      if (until !== null) setPause({ text: describeError(error), until });
      else setLoadError(describeError(error));
    },
    [onSignedOut],
  );

  const adoptBudget = useCallback((state: RateLimitState) => {
    setBudget(state);
    const until = exhaustedUntil(state);
    if (until !== null) setCooldownUntil((current) => Math.max(current ?? 0, until));
  }, []);

  const refreshBudget = useCallback(async () => {
    try {
      const bulk = (await client.rateLimits()).find((report) => report.control === 'task-bulk');
      if (bulk) adoptBudget({ ...bulk, policy: bulk.control, retryAfter: null, receivedAt: Date.now() });
    } catch {
      // Only informative: the next reassignment's headers report the budget anyway.
    }
  }, [client, adoptBudget]);

  useEffect(() => {
    heading.current?.focus();
    void refreshBudget();
  }, [refreshBudget]);

  const loadEmployees = useCallback(async () => {
    try {
      setEmployees(await client.employees());
    } catch (error) {
      failed(error);
    }
  }, [client, failed]);

  useEffect(() => {
    void loadEmployees();
  }, [loadEmployees]);

  useEffect(() => {
    const controller = new AbortController();
    const { filters, cursors } = position;
    setLoading(true);
    client
      .tasks({ ...filters, cursor: cursors[cursors.length - 1] }, { signal: controller.signal })
      .then(
        (result) => {
          setPage(result);
          setLoadError(null);
        },
        (error) => {
          if (!controller.signal.aborted) failed(error);
        },
      )
      .finally(() => {
        if (!controller.signal.aborted) setLoading(false);
      });
    return () => controller.abort();
  }, [client, position, failed]);

  // The end of a pause: load again what the rate limit refused.
  useEffect(() => {
    if (pause === null || pauseLeft > 0) return;
    setPause(null);
    setPosition((current) => ({ ...current }));
    if (employees.length === 0) void loadEmployees();
  }, [pause, pauseLeft, employees, loadEmployees]);

  // The end of a bulk cooldown: the button comes back, and the budget is read again.
  useEffect(() => {
    if (cooldownUntil === null || cooldown > 0) return;
    setCooldownUntil(null);
    setBulkError(null);
    setBulkNote('You can reassign again.');
    void refreshBudget();
  }, [cooldownUntil, cooldown, refreshBudget]);

  const applyFilters = (filters: Filters) => {
    setSelected(new Set());
    setSelectionNote(null);
    setPosition({ filters, cursors: [undefined] });
  };

  const tasks = page?.tasks ?? [];
  const pageIds = tasks.map((task) => task.id);

  const toggle = (task: Task, event: MouseEvent) => {
    const next = new Set(selected);
    if (next.has(task.id)) {
      next.delete(task.id);
    } else if (next.size >= MAX_SELECTED) {
      event.preventDefault();
      setSelectionNote(
        `A reassignment takes at most ${MAX_SELECTED} tasks: unselect one before selecting another.`,
      );
      return;
    } else {
      next.add(task.id);
    }
    setSelectionNote(null);
    setSelected(next);
  };

  const toggleAll = () => {
    if (headerState(selected, pageIds).checked) {
      setSelected(unselectPage(selected, pageIds));
      setSelectionNote(null);
      return;
    }
    const { next, capped } = selectPage(selected, pageIds);
    setSelected(next);
    setSelectionNote(
      capped
        ? `A reassignment takes at most ${MAX_SELECTED} tasks, so only ${MAX_SELECTED} are selected, not all ${pageIds.length} on this page.`
        : null,
    );
  };

  const reassign = async (assigneeId: number) => {
    setBulkBusy(true);
    setBulkError(null);
    setBulkNote(null);
    setOutcome(null);
    try {
      const result = await client.bulkReassign([...selected], assigneeId);
      setOutcome({ ...result, assignee: names.get(assigneeId) ?? `user ${assigneeId}` });
      if (result.rateLimit) adoptBudget(result.rateLimit);
      setSelected(new Set());
      setSelectionNote(null);
      setPosition((current) => ({ ...current }));
    } catch (error) {
      if (isApiError(error) && error.rateLimit) adoptBudget(error.rateLimit);
      if (isApiError(error, 'UNAUTHENTICATED')) return onSignedOut(describeError(error));
      const until = isApiError(error, 'TASK_BULK_RATE_LIMIT') ? retryDeadline(error) : null;
      if (until !== null) setCooldownUntil((current) => Math.max(current ?? 0, until));
      setBulkError(describeError(error));
    } finally {
      setBulkBusy(false);
    }
  };

  const pageNumber = position.cursors.length;
  const blocked = loading || pause !== null;
  return (
    <section aria-labelledby="tasks-title">
      <h1 id="tasks-title" tabIndex={-1} ref={heading}>
        Tasks
      </h1>
      <p class="hint">Signed in as {user.email}.</p>
      {pause && (
        <div class="banner warning" role="alert">
          <p>{pause.text}</p>
          <p role="timer">The tasks will load again in {duration(pauseLeft)}.</p>
        </div>
      )}
      {loadError && (
        <div class="banner error" role="alert">
          <p>{loadError}</p>
          <button type="button" onClick={() => setPosition((current) => ({ ...current }))}>
            Try again
          </button>
        </div>
      )}
      <TaskFilters
        employees={employees}
        applied={position.filters}
        disabled={blocked}
        onApply={applyFilters}
      />
      <BulkPanel
        employees={employees}
        selectedCount={selected.size}
        budget={budget}
        cooldown={cooldown}
        busy={bulkBusy}
        outcome={outcome}
        error={bulkError}
        note={bulkNote}
        onReassign={reassign}
      />
      <div class="selection" role="status" id="selection-status">
        <span>
          {selected.size} of at most {MAX_SELECTED} selected.
        </span>
        {selectionNote && <span class="note"> {selectionNote}</span>}
      </div>
      {selected.size > 0 && (
        <button
          type="button"
          class="secondary"
          onClick={() => {
            setSelected(new Set());
            setSelectionNote(null);
          }}
        >
          Clear selection
        </button>
      )}
      <TaskTable
        tasks={tasks}
        names={names}
        selected={selected}
        busy={loading}
        onToggle={toggle}
        onToggleAll={toggleAll}
      />
      <nav class="pager" aria-label="Pages">
        <button
          type="button"
          disabled={blocked || pageNumber === 1}
          onClick={() => setPosition((current) => ({ ...current, cursors: current.cursors.slice(0, -1) }))}
        >
          Previous page
        </button>
        <span aria-live="polite">Page {pageNumber}</span>
        <button
          type="button"
          disabled={blocked || !page?.nextCursor}
          onClick={() =>
            page?.nextCursor &&
            setPosition((current) => ({ ...current, cursors: [...current.cursors, page.nextCursor!] }))
          }
        >
          Next page
        </button>
      </nav>
    </section>
  );
}
