// "New task" on the Tasks page: the form, its refusals beside their fields, then the new task's own view.
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { type ApiClient, isApiError, newIdempotencyKey } from '../../../src/client/index.ts';
import { taskHash } from '../shared/portal-view.ts';
import type { Named } from './named-select.tsx';
import { type EditedField, NEW_DRAFT, newTaskBody, refusedField } from './task-edit.ts';
import { TaskFormFields, useTaskFields } from './task-form-fields.tsx';
import { describeTaskError, FIELD_PROBLEMS } from './task-wording.ts';

interface Props {
  readonly client: ApiClient;
  readonly people: readonly Named[];
  readonly clients: readonly Named[];
  readonly onSignedOut: (notice: string) => void;
}

/** The title and description take whole rows; the four choices share the rows below. */
const NEW_FIELDS: readonly EditedField[] = [
  'title',
  'description',
  'clientId',
  'assigneeId',
  'priority',
  'dueDate',
];

/** The button that opens the form, and the form. */
export function NewTask(props: Props) {
  const [open, setOpen] = useState(false);
  const opener = useRef<HTMLButtonElement>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  useLayoutEffect(() => {
    if (open) heading.current?.focus();
  }, [open]);
  const close = () => {
    setOpen(false);
    // The form goes; focus returns to the button that opened it.
    queueMicrotask(() => opener.current?.focus());
  };
  if (!open)
    return (
      <p>
        <button type="button" id="new-task-open" ref={opener} onClick={() => setOpen(true)}>
          New task
        </button>
      </p>
    );
  return (
    <section class="panel" aria-labelledby="new-task-title">
      <h2 id="new-task-title" tabIndex={-1} ref={heading}>
        New task
      </h2>
      <NewTaskForm {...props} onCancel={close} />
    </section>
  );
}

function NewTaskForm({ client, people, clients, onSignedOut, onCancel }: Props & { onCancel: () => void }) {
  const form = useTaskFields(NEW_DRAFT);
  const { draft, setProblem } = form;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const alert = useRef<HTMLDivElement>(null);
  // The key of the last create whose answer never came, kept with its body: the same task sent
  // again goes under the same key, so that the server makes it once (docs/rules.md#tasks).
  const pending = useRef<{ key: string; body: string } | null>(null);

  const submit = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    if (draft.clientId === '') {
      setProblem({ field: 'clientId', text: 'Choose the client this task is for.' });
      return;
    }
    if (draft.title.trim() === '') {
      setProblem({ field: 'title', text: 'Give the task a title.' });
      return;
    }
    const body = newTaskBody(draft);
    const text = JSON.stringify(body);
    const key = pending.current?.body === text ? pending.current.key : newIdempotencyKey();
    pending.current = { key, body: text };
    setBusy(true);
    setProblem(null);
    setError(null);
    try {
      const { task } = await client.createTask(body, { idempotencyKey: key });
      pending.current = null;
      location.hash = taskHash(task.id);
    } catch (failure) {
      setBusy(false);
      if (isApiError(failure, 'UNAUTHENTICATED'))
        return onSignedOut('Your session has ended. Sign in again.');
      const field = refusedField(failure);
      // Refused for sure: a new try is a new request under a new key.
      if (isApiError(failure, 'VALIDATION_ERROR', 'CLIENT_NOT_FOUND', 'ASSIGNEE_NOT_FOUND'))
        pending.current = null;
      if (field)
        setProblem({
          field,
          text: isApiError(failure, 'VALIDATION_ERROR') ? FIELD_PROBLEMS[field] : describeTaskError(failure),
        });
      else {
        const unknownFate = isApiError(
          failure,
          'NETWORK_ERROR',
          'SERVICE_UNAVAILABLE',
          'GATEWAY_TIMEOUT',
          'UNEXPECTED_RESPONSE',
        );
        setError(
          unknownFate
            ? 'The connection broke before the server answered, so the task may already exist. Press Create task again: it is sent as the same request, and the server makes the task only once.'
            : describeTaskError(failure),
        );
        queueMicrotask(() => alert.current?.focus());
      }
    }
  };

  return (
    <form onSubmit={submit} class="task-form" aria-busy={busy}>
      <TaskFormFields
        prefix="new-task-field"
        form={form}
        people={people}
        clients={clients}
        fields={NEW_FIELDS}
      />
      <div role="alert" id="new-task-problem" tabIndex={-1} ref={alert}>
        {error && <p class="error">{error}</p>}
      </div>
      <div class="form-actions">
        <button type="submit" aria-disabled={busy ? 'true' : undefined}>
          {busy ? 'Creating…' : 'Create task'}
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
