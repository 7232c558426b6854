// A task's fields as a form's controls, each with its label and its refusal beside it (New task and a task's
// view).
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { TASK_PRIORITIES, TASK_STATUSES } from '../../../src/client/index.ts';
import { fieldErrorProps } from '../shared/field-error.ts';
import { STATUS_LABELS } from '../shared/wording.ts';
import type { Named } from './named-select.tsx';
import type { Draft, EditedField } from './task-edit.ts';
import { FIELD_LABELS, PRIORITY_LABELS } from './task-wording.ts';

/** The refused field and what is said beside it. */
export interface FieldProblem {
  readonly field: EditedField;
  readonly text: string;
}

/**
 * A task's fields being edited (`D`: a draft, or null until the task loads): a refused field takes
 * focus, read out with its refusal, and a change of that field ends the refusal.
 */
export function useTaskFields<D extends Draft | null>(initial: D) {
  const [draft, setDraft] = useState<D>(initial);
  const [problem, setProblem] = useState<FieldProblem | null>(null);
  /** Given to the refused field's control, so that it can take focus. */
  const refused = useRef<HTMLElement>(null);
  useLayoutEffect(() => {
    if (problem) refused.current?.focus();
  }, [problem]);
  const change = (field: EditedField, value: string) => {
    setDraft((now) => (now ? ({ ...now, [field]: value } as D) : now));
    if (problem?.field === field) setProblem(null);
  };
  return { draft, setDraft, problem, setProblem, refused, change };
}

interface Props {
  /** Prefixes every control's id: "new-task" → "new-task-title". */
  readonly prefix: string;
  /** Shown once it holds a draft. */
  readonly form: Pick<
    ReturnType<typeof useTaskFields<Draft | null>>,
    'draft' | 'change' | 'problem' | 'refused'
  >;
  readonly people: readonly Named[];
  readonly clients: readonly Named[];
  /** The fields shown: a new task has no status of its own to choose. */
  readonly fields: readonly EditedField[];
  /** When set, each field the person changed says so (beside the label, in words). */
  readonly changed?: ReadonlySet<EditedField>;
}

/** Choices shown by their labels. */
const LABELLED_CHOICES = {
  status: TASK_STATUSES.map((status) => [status, STATUS_LABELS[status]] as const),
  priority: TASK_PRIORITIES.map((priority) => [priority, PRIORITY_LABELS[priority]] as const),
};

export function TaskFormFields({ prefix, form, people, clients, fields, changed }: Props) {
  const { draft, problem, refused: problemRef, change: onChange } = form;
  if (draft === null) return null;
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
            if (refused) problemRef.current = element;
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
            ) : field === 'status' || field === 'priority' ? (
              <select {...common} value={draft[field]} onChange={input}>
                {LABELLED_CHOICES[field].map(([value, label]) => (
                  <option key={value} value={value}>
                    {label}
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
