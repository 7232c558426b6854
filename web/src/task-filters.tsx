// The filter form above the table: client, assignee, status and page size, applied together.
import { useState } from 'preact/hooks';
import { TASK_STATUSES, type TaskStatus, type User } from '../../src/client/index.ts';
import { EmployeeSelect } from './employee-select.tsx';
import { STATUS_LABELS } from './wording.ts';

export interface Filters {
  readonly clientId?: number;
  readonly assigneeId?: number;
  readonly status?: TaskStatus;
  readonly limit: number;
}

const PAGE_SIZES = [25, 50, 100, 200];

interface Props {
  readonly employees: readonly User[];
  readonly applied: Filters;
  readonly disabled: boolean;
  readonly onApply: (filters: Filters) => void;
}

const toNumber = (text: string) => (/^\d+$/.test(text) && Number(text) > 0 ? Number(text) : undefined);

export function TaskFilters({ employees, applied, disabled, onApply }: Props) {
  const [client, setClient] = useState(applied.clientId?.toString() ?? '');
  const [assignee, setAssignee] = useState(applied.assigneeId?.toString() ?? '');
  const [status, setStatus] = useState<string>(applied.status ?? '');
  const [limit, setLimit] = useState(String(applied.limit));

  const submit = (event: Event) => {
    event.preventDefault();
    onApply({
      clientId: toNumber(client),
      assigneeId: toNumber(assignee),
      status: status === '' ? undefined : (status as TaskStatus),
      limit: Number(limit),
    });
  };

  return (
    <form class="filters" onSubmit={submit} aria-label="Filter tasks">
      <div class="field">
        <label for="filter-client">Client number</label>
        <input
          id="filter-client"
          type="number"
          min={1}
          inputMode="numeric"
          placeholder="Any"
          value={client}
          onInput={(event) => setClient(event.currentTarget.value)}
        />
      </div>
      <EmployeeSelect
        id="filter-assignee"
        label="Assignee"
        emptyChoice="Anyone"
        employees={employees}
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
      <button type="submit" disabled={disabled}>
        Apply filters
      </button>
    </form>
  );
}
