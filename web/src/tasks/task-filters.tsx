// The filter form above the table: search, client, assignee, status, sort and page size, applied together.
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import {
  type Client,
  type Colleague,
  TASK_STATUSES,
  type TaskSort,
  type TaskStatus,
} from '../../../src/client/index.ts';
import { fieldErrorProps } from '../shared/field-error.ts';
import { STATUS_LABELS } from '../shared/wording.ts';
import { NamedSelect } from './named-select.tsx';
import { type Filters, hasSearchWord, PAGE_SIZES, SEARCH_MAX_LENGTH } from './task-address.ts';
import { SEARCH_PROBLEM, SORT_LABELS } from './task-wording.ts';

export type { Filters } from './task-address.ts';

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
  const [q, setQ] = useState(applied.q ?? '');
  const [sort, setSort] = useState<string>(applied.sort ?? 'id');
  const [searchRefused, setSearchRefused] = useState(false);
  const searchBox = useRef<HTMLInputElement>(null);
  useLayoutEffect(() => {
    if (searchRefused) searchBox.current?.focus();
  }, [searchRefused]);

  const submit = (event: Event) => {
    event.preventDefault();
    if (disabled) return;
    const words = q.trim();
    if (words !== '' && !hasSearchWord(words)) {
      setSearchRefused(true);
      return;
    }
    onApply({
      q: words === '' ? undefined : words,
      sort: sort === 'id' ? undefined : (sort as TaskSort),
      clientId: toId(client),
      assigneeId: toId(assignee),
      status: status === '' ? undefined : (status as TaskStatus),
      limit: Number(limit),
    });
  };

  return (
    <form class="filters" onSubmit={submit} aria-label="Filter tasks">
      <div class="field search">
        <label for="filter-q">Search</label>
        <input
          id="filter-q"
          type="search"
          ref={searchBox}
          value={q}
          maxLength={SEARCH_MAX_LENGTH}
          onInput={(event) => {
            setQ(event.currentTarget.value);
            setSearchRefused(false);
          }}
          {...fieldErrorProps(searchRefused, searchRefused && 'filter-q-problem')}
        />
        {searchRefused && (
          <p id="filter-q-problem" class="error">
            {SEARCH_PROBLEM}
          </p>
        )}
      </div>
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
        <label for="filter-sort">Sort</label>
        <select id="filter-sort" value={sort} onChange={(event) => setSort(event.currentTarget.value)}>
          {(Object.keys(SORT_LABELS) as TaskSort[]).map((value) => (
            <option key={value} value={value}>
              {SORT_LABELS[value]}
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
