// The table of one page of tasks, with a checkbox per task and a select-all for the page.
import type { Task } from '../../../src/client/index.ts';
import { taskHash } from '../shared/portal-view.ts';
import { STATUS_LABELS } from '../shared/wording.ts';
import { headerState, MAX_SELECTED } from './selection.ts';
import { isOverdue, localToday } from './task-edit.ts';
import { OVERDUE, PRIORITY_LABELS } from './task-wording.ts';

interface Props {
  readonly tasks: readonly Task[];
  /** Employees' names by id. */
  readonly names: ReadonlyMap<number, string>;
  /** Clients' names by id. */
  readonly clientNames: ReadonlyMap<number, string>;
  readonly selected: ReadonlySet<number>;
  readonly busy: boolean;
  readonly onToggle: (task: Task, event: MouseEvent) => void;
  readonly onToggleAll: () => void;
}

export function TaskTable({ tasks, names, clientNames, selected, busy, onToggle, onToggleAll }: Props) {
  const header = headerState(
    selected,
    tasks.map((task) => task.id),
  );
  const today = localToday();
  if (tasks.length === 0 && !busy) return <p class="empty">No tasks match these filters.</p>;
  return (
    <table class="tasks" aria-busy={busy}>
      <thead>
        <tr>
          <th scope="col" class="pick">
            <input
              type="checkbox"
              id="select-page"
              checked={header.checked}
              indeterminate={header.indeterminate}
              onChange={onToggleAll}
            />
            {/* Visible only in the narrow layout, where the column headings are hidden. */}
            <label for="select-page" class="select-page-label">
              Select all on this page (at most {MAX_SELECTED})
            </label>
          </th>
          <th scope="col">ID</th>
          <th scope="col">Title</th>
          <th scope="col">Client</th>
          <th scope="col">Status</th>
          <th scope="col">Assignee</th>
          <th scope="col">Priority</th>
          <th scope="col">Due</th>
        </tr>
      </thead>
      <tbody>
        {tasks.map((task) => (
          <tr key={task.id} data-task-id={task.id} class={selected.has(task.id) ? 'selected' : undefined}>
            <td class="pick">
              <input
                type="checkbox"
                aria-label={`Select task ${task.id}: ${task.title}`}
                checked={selected.has(task.id)}
                onClick={(event) => onToggle(task, event)}
              />
            </td>
            <td data-label="ID">{task.id}</td>
            <td data-label="Title" class="title">
              {/* The task's own view, kept in the address (#task/42). */}
              <a href={taskHash(task.id)}>{task.title}</a>
            </td>
            <td data-label="Client" class="client">
              {clientNames.get(task.clientId) ?? `Client ${task.clientId}`}
            </td>
            <td data-label="Status">{STATUS_LABELS[task.status]}</td>
            <td data-label="Assignee" class="assignee">
              {task.assigneeId === null
                ? 'Unassigned'
                : (names.get(task.assigneeId) ?? `User ${task.assigneeId}`)}
            </td>
            <td data-label="Priority">{PRIORITY_LABELS[task.priority]}</td>
            <td data-label="Due" class="due">
              {task.dueDate ?? 'No due date'}
              {isOverdue(task, today) && <strong class="overdue"> {OVERDUE}</strong>}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
