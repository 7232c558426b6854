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

const STATUS_CHOICES = TASK_STATUSES.map((status) => ({ id: status, name: STATUS_LABELS[status] }));
const SORT_CHOICES = Object.entries(SORT_LABELS).map(([sort, name]) => ({ id: sort, name }));
const SIZE_CHOICES = PAGE_SIZES.map((size) => ({ id: size, name: String(size) }));

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
      <NamedSelect
        id="filter-status"
        label="Status"
        emptyChoice="Any"
        choices={STATUS_CHOICES}
        value={status}
        onChange={setStatus}
      />
      <NamedSelect id="filter-sort" label="Sort" choices={SORT_CHOICES} value={sort} onChange={setSort} />
      <NamedSelect
        id="filter-limit"
        label="Per page"
        choices={SIZE_CHOICES}
        value={limit}
        onChange={setLimit}
      />
      <button type="submit" disabled={disabled} data-hand-off="results-title">
        Apply filters
      </button>
    </form>
  );
}
