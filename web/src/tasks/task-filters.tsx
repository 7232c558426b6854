// The filter form above the table: client, assignee, status and page size, applied together.
import { useState } from 'preact/hooks';
import { type Client, type Colleague, TASK_STATUSES, type TaskStatus } from '../../../src/client/index.ts';
import { STATUS_LABELS } from '../shared/wording.ts';
import { NamedSelect } from './named-select.tsx';

export interface Filters {
  readonly clientId?: number;
  readonly assigneeId?: number;
  readonly status?: TaskStatus;
  readonly limit: number;
}

const PAGE_SIZES = [25, 50, 100, 200];

interface Props {
  readonly employees: readonly Colleague[];
  readonly clients: readonly Client[];
  readonly applied: Filters;
  /** Paused by a rate limit: the button is disabled. While a page loads it is not: new filters replace that load. */
  readonly disabled: boolean;
  readonly onApply: (filters: Filters) => void;
}

/** A picker's value as an id; the empty choice ("Any client", "Anyone") as no filter. */
const toId = (value: string) => (value === '' ? undefined : Number(value));

export function TaskFilters({ employees, clients, applied, disabled, onApply }: Props) {
  const [client, setClient] = useState(applied.clientId?.toString() ?? '');
  const [assignee, setAssignee] = useState(applied.assigneeId?.toString() ?? '');
  const [status, setStatus] = useState<string>(applied.status ?? '');
  const [limit, setLimit] = useState(String(applied.limit));

  const submit = (event: Event) => {
    event.preventDefault();
    if (disabled) return;
    onApply({
      clientId: toId(client),
      assigneeId: toId(assignee),
      status: status === '' ? undefined : (status as TaskStatus),
      limit: Number(limit),
    });
  };

  return (
    <form class="filters" onSubmit={submit} aria-label="Filter tasks">
      <NamedSelect
        id="filter-client"
        label="Client"
        emptyChoice="Any client"
        choices={clients}
        value={client}
        onChange={setClient}
      />
      <NamedSelect
        id="filter-assignee"
        label="Assignee"
        emptyChoice="Anyone"
        choices={employees}
        value={assignee}
        onChange={setAssignee}
      />
      <div class="field">
        <label for="filter-status">Status</label>
        <select id="filter-status" value={status} onChange={(event) => setStatus(event.currentTarget.value)}>
          <option value="">Any</option>
          {TASK_STATUSES.map((value) => (
            <option key={value} value={value}>
              {STATUS_LABELS[value]}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="filter-limit">Per page</label>
        <select id="filter-limit" value={limit} onChange={(event) => setLimit(event.currentTarget.value)}>
          {PAGE_SIZES.map((size) => (
            <option key={size} value={size}>
              {size}
            </option>
          ))}
        </select>
      </div>
      <button type="submit" disabled={disabled} data-hand-off="results-title">
        Apply filters
      </button>
    </form>
  );
}
