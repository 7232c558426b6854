// A task's fields as a form's controls, each with its label and its refusal beside it (New task and a task's view).
import type { RefObject } from 'preact';
import { TASK_PRIORITIES, TASK_STATUSES } from '../../../src/client/index.ts';
import { fieldErrorProps } from '../shared/field-error.ts';
import { STATUS_LABELS } from '../shared/wording.ts';
import type { Named } from './named-select.tsx';
import type { Draft, EditedField } from './task-edit.ts';
import { FIELD_LABELS, PRIORITY_LABELS } from './task-wording.ts';

interface Props {
  /** Prefixes every control's id: "new-task" → "new-task-title". */
  readonly prefix: string;
  readonly draft: Draft;
  readonly onChange: (field: EditedField, value: string) => void;
  readonly people: readonly Named[];
  readonly clients: readonly Named[];
  /** The refused field and what is said beside it. */
  readonly problem: { readonly field: EditedField; readonly text: string } | null;
  /** Given to the refused field's control, so that it can take focus. */
  readonly problemRef?: RefObject<HTMLElement | null>;
  /** The fields shown: a new task has no status of its own to choose. */
  readonly fields: readonly EditedField[];
  /** When set, each field the person changed says so (beside the label, in words). */
  readonly changed?: ReadonlySet<EditedField>;
}

export function TaskFormFields({
  prefix,
  draft,
  onChange,
  people,
  clients,
  problem,
  problemRef,
  fields,
  changed,
}: Props) {
  return (
    <div class="task-fields">
      {fields.map((field) => {
        const id = `${prefix}-${field}`;
        const problemId = `${id}-problem`;
        const refused = problem?.field === field;
        const common = {
          id,
          name: field,
          ...fieldErrorProps(refused, refused && problemId),
          ref: (element: HTMLElement | null) => {
            if (refused && problemRef) problemRef.current = element;
          },
        };
        const input = (event: Event) => onChange(field, (event.currentTarget as HTMLInputElement).value);
        return (
          <div class={`field field-${field}`} key={field}>
            <label for={id}>
              {FIELD_LABELS[field]}
              {changed?.has(field) && <span class="badge">changed by you</span>}
            </label>
            {field === 'title' ? (
              <input {...common} type="text" required maxLength={200} value={draft.title} onInput={input} />
            ) : field === 'description' ? (
              <textarea {...common} rows={4} maxLength={10_000} value={draft.description} onInput={input} />
            ) : field === 'dueDate' ? (
              <input {...common} type="date" value={draft.dueDate} onInput={input} />
            ) : field === 'status' ? (
              <select {...common} value={draft.status} onChange={input}>
                {TASK_STATUSES.map((status) => (
                  <option key={status} value={status}>
                    {STATUS_LABELS[status]}
                  </option>
                ))}
              </select>
            ) : field === 'priority' ? (
              <select {...common} value={draft.priority} onChange={input}>
                {TASK_PRIORITIES.map((priority) => (
                  <option key={priority} value={priority}>
                    {PRIORITY_LABELS[priority]}
                  </option>
                ))}
              </select>
            ) : field === 'assigneeId' ? (
              <select {...common} value={draft.assigneeId} onChange={input}>
                <option value="">Unassigned</option>
                {withCurrent(people, draft.assigneeId).map((person) => (
                  <option key={person.id} value={person.id}>
                    {person.name}
                  </option>
                ))}
              </select>
            ) : (
              <select {...common} required value={draft.clientId} onChange={input}>
                {draft.clientId === '' && <option value="">Choose a client</option>}
                {withCurrent(clients, draft.clientId).map((item) => (
                  <option key={item.id} value={item.id}>
                    {item.name}
                  </option>
                ))}
              </select>
            )}
            {refused && (
              <p class="error" id={problemId}>
                {problem.text}
              </p>
            )}
          </div>
        );
      })}
    </div>
  );
}

/** The choices, with the current value kept when the list lacks it (a disabled assignee), so nothing changes unseen. */
function withCurrent(choices: readonly Named[], value: string): readonly Named[] {
  if (value === '' || choices.some((choice) => String(choice.id) === value)) return choices;
  return [...choices, { id: Number(value), name: `#${value}` }];
}
