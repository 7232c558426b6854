// The Tasks page: searched, filtered, paged tasks, a selection of up to 50, bulk reassignment within its
// budget, CSV out and in.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ApiClient, Task, User } from '../../../src/client/index.ts';
import { useFocusHandOff, useFocusOnShow, whileBusy } from '../shared/focus-hand-off.ts';
import { LoadTroubleBanners } from '../shared/load-trouble-banners.tsx';
import { useDocumentTitle } from '../shared/page-title.ts';
import { VIEW_LABELS } from '../shared/portal-view.ts';
import { useLoadTrouble } from '../shared/use-load-trouble.ts';
import { resultsSentence } from '../shared/wording.ts';
import { BulkPanel } from './bulk-panel.tsx';
import { NewTask } from './new-task.tsx';
import { MAX_SELECTED } from './selection.ts';
import { SkipLinks } from './skip-links.tsx';
import { filtersFromAddress, keepInAddress } from './task-address.ts';
import { type Filters, TaskFilters } from './task-filters.tsx';
import { TaskTable } from './task-table.tsx';
import { TaskTransfer } from './task-transfer.tsx';
import { useBulkBudget } from './use-bulk-budget.ts';
import { useNamedList } from './use-named-list.ts';
import { useReassignment } from './use-reassignment.ts';
import { useSelection } from './use-selection.ts';
import { useTaskImport } from './use-task-import.ts';
import { useTaskPages } from './use-task-pages.ts';

interface Props {
  readonly client: ApiClient;
  readonly user: User;
  /** The session is gone: back to the Login page with this notice. */
  readonly onSignedOut: (notice: string) => void;
}

/** Past the filters and the checkboxes: to the task list's heading, and to the pager. */
const SKIPS = [
  { target: 'results-title', label: 'Skip to the task list' },
  { target: 'pager', label: 'Skip to the pages' },
];

export function TasksPage({ client, user, onSignedOut }: Props) {
  const heading = useRef<HTMLHeadingElement>(null);
  const section = useRef<HTMLElement>(null);
  useFocusOnShow(heading);
  useFocusHandOff(section, heading);
  useDocumentTitle(VIEW_LABELS.tasks);
  // In this order, the page's first requests are the budget, the employees, the clients, then the tasks.
  const bulkBudget = useBulkBudget(client);
  const trouble = useLoadTrouble(onSignedOut);
  const { items: employees, names } = useNamedList(client, 'employees', trouble);
  const { items: clients, names: clientNames } = useNamedList(client, 'clients', trouble);
  // The search the address asks for (a bookmark, a shared link, a reload); what is applied goes back into it.
  const [firstFilters] = useState(() => filtersFromAddress(location.search));
  const pages = useTaskPages(client, firstFilters, trouble);
  useEffect(() => keepInAddress(pages.filters), [pages.filters]);
  const selection = useSelection();
  const reassignment = useReassignment(client, bulkBudget, onSignedOut);
  const taskImport = useTaskImport(client, pages.reload, onSignedOut);

  const applyFilters = (filters: Filters) => {
    selection.clear();
    pages.applyFilters(filters);
  };

  const toggle = (task: Task, event: MouseEvent) => {
    if (!selection.toggle(task.id)) event.preventDefault();
  };

  const reassign = async (assigneeId: number) => {
    const assignee = names.get(assigneeId) ?? `user ${assigneeId}`;
    if (await reassignment.reassign([...selection.selected], assigneeId, assignee)) {
      selection.clear();
      pages.reload();
    }
  };

  const { pause } = trouble;
  // Paused by a rate limit, the controls that load are disabled; while a page loads they only wait
  // (aria-disabled), so that focus stays on the one just pressed.
  const paused = pause !== null;
  return (
    <section aria-labelledby="tasks-title" ref={section}>
      <h1 id="tasks-title" tabIndex={-1} ref={heading}>
        {VIEW_LABELS.tasks}
      </h1>
      <p class="hint">Signed in as {user.email}.</p>
      <SkipLinks links={SKIPS} />
      <NewTask client={client} people={employees} clients={clients} onSignedOut={onSignedOut} />
      <LoadTroubleBanners trouble={trouble} what="The tasks" onRetry={pages.reload} />
      <TaskFilters
        employees={employees}
        clients={clients}
        applied={pages.filters}
        disabled={paused}
        onApply={applyFilters}
      />
      <TaskTransfer
        exportUrl={client.exportTasksUrl(pages.filters)}
        state={taskImport.state}
        onImport={taskImport.start}
      />
      <BulkPanel
        employees={employees}
        selectedCount={selection.selected.size}
        budget={bulkBudget.budget}
        cooldown={bulkBudget.cooldown}
        busy={reassignment.busy}
        outcome={reassignment.outcome}
        error={reassignment.error}
        note={reassignment.note}
        onReassign={reassign}
      />
      <div class="selection" role="status" id="selection-status">
        <span>
          {selection.selected.size} of at most {MAX_SELECTED} selected.
        </span>
        {selection.note && <span class="note"> {selection.note}</span>}
      </div>
      {selection.selected.size > 0 && (
        <button
          type="button"
          class="secondary"
          onClick={selection.clear}
          data-hand-off="select-page results-title"
        >
          Clear selection
        </button>
      )}
      <h2 id="results-title" tabIndex={-1}>
        Task list
      </h2>
      <p id="results-status" role="status" class="hint">
        {resultsSentence(pages.tasks.length, pages.pageNumber, pages.loading)}
      </p>
      <TaskTable
        tasks={pages.tasks}
        names={names}
        clientNames={clientNames}
        selected={selection.selected}
        busy={pages.loading}
        onToggle={toggle}
        onToggleAll={() => selection.togglePage(pages.tasks.map((task) => task.id))}
      />
      <nav class="pager" id="pager" aria-label="Pages" tabIndex={-1}>
        <button
          type="button"
          id="previous-page"
          disabled={paused || pages.pageNumber === 1}
          data-hand-off="next-page results-title"
          {...whileBusy(pages.loading, pages.previous)}
        >
          Previous page
        </button>
        <span>Page {pages.pageNumber}</span>
        <button
          type="button"
          id="next-page"
          disabled={paused || !pages.hasNext}
          data-hand-off="previous-page results-title"
          {...whileBusy(pages.loading, pages.next)}
        >
          Next page
        </button>
      </nav>
    </section>
  );
}
