// The Clients page (admins): every client, adding one, renaming one in place; a name taken is said beside its field.
import { useCallback, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { type ApiClient, type Client, isApiError, type User } from '../../../src/client/index.ts';
import { fieldErrorProps } from '../shared/field-error.ts';
import { useFocusHandOff, useFocusOnShow } from '../shared/focus-hand-off.ts';
import { LoadTroubleBanners } from '../shared/load-trouble-banners.tsx';
import { useDocumentTitle } from '../shared/page-title.ts';
import { VIEW_LABELS } from '../shared/portal-view.ts';
import { useLoadTrouble } from '../shared/use-load-trouble.ts';
import { useLoadedList } from '../shared/use-loaded-list.ts';
import { describeError } from '../shared/wording.ts';

interface Props {
  readonly client: ApiClient;
  readonly user: User;
  readonly onSignedOut: (notice: string) => void;
}

/** A refusal in words: a name taken (ignoring case) or one the rules refuse, else the general wording. */
function refusal(error: unknown, name: string): string {
  if (isApiError(error, 'CLIENT_NAME_TAKEN'))
    return `A client named “${name.trim()}” already exists (ignoring case).`;
  if (isApiError(error, 'VALIDATION_ERROR'))
    return 'Give a name of 1 to 200 characters, without control characters.';
  return describeError(error);
}

export function ClientsPage({ client, user, onSignedOut }: Props) {
  const heading = useRef<HTMLHeadingElement>(null);
  const section = useRef<HTMLElement>(null);
  const outcomeRef = useRef<HTMLParagraphElement>(null);
  useFocusOnShow(heading);
  useFocusHandOff(section, heading);
  useDocumentTitle(VIEW_LABELS.clients);
  const trouble = useLoadTrouble(onSignedOut);
  const load = useCallback(() => client.clients(), [client]);
  const clients = useLoadedList<Client>(load, trouble);
  const [outcome, setOutcome] = useState<string | null>(null);

  const done = (text: string) => {
    setOutcome(text);
    clients.reload();
    queueMicrotask(() => outcomeRef.current?.focus());
  };
  const failed = (error: unknown) => {
    if (isApiError(error, 'UNAUTHENTICATED')) onSignedOut('Your session has ended. Sign in again.');
  };

  return (
    <section aria-labelledby="clients-title" ref={section}>
      <h1 id="clients-title" tabIndex={-1} ref={heading}>
        {VIEW_LABELS.clients}
      </h1>
      <p class="hint">Signed in as {user.email}. Clients are never deleted: their tasks refer to them.</p>
      <LoadTroubleBanners trouble={trouble} what="The list" onRetry={clients.reload} />
      <AddClient client={client} onAdded={(added) => done(`${added.name} is added.`)} onFailed={failed} />
      <section class="panel" aria-labelledby="client-list-title">
        <h2 id="client-list-title">All clients</h2>
        <p role="status" class="status" id="clients-outcome" tabIndex={-1} ref={outcomeRef}>
          {outcome}
        </p>
        {clients.list === null ? (
          clients.loading && <p aria-busy="true">Loading clients…</p>
        ) : (
          <table class="data" id="clients" aria-labelledby="client-list-title" aria-busy={clients.loading}>
            <thead>
              <tr>
                <th scope="col">ID</th>
                <th scope="col">Name</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {clients.list.map((item) => (
                <ClientRow
                  key={item.id}
                  api={client}
                  item={item}
                  onRenamed={(renamed) => done(`${item.name} is now ${renamed.name}.`)}
                  onFailed={failed}
                />
              ))}
            </tbody>
          </table>
        )}
      </section>
    </section>
  );
}

function AddClient({
  client,
  onAdded,
  onFailed,
}: {
  client: ApiClient;
  onAdded: (added: Client) => void;
  onFailed: (error: unknown) => void;
}) {
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);
  useLayoutEffect(() => {
    if (problem) input.current?.focus();
  }, [problem]);

  const submit = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    setBusy(true);
    setProblem(null);
    try {
      const added = await client.createClient(name);
      setName('');
      onAdded(added);
    } catch (error) {
      onFailed(error);
      setProblem(refusal(error, name));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="panel" aria-labelledby="add-client-title">
      <h2 id="add-client-title">Add a client</h2>
      <form onSubmit={submit} class="add-person">
        <div class="field">
          <label for="client-name">Client name</label>
          <input
            id="client-name"
            ref={input}
            type="text"
            autocomplete="off"
            required
            maxLength={200}
            {...fieldErrorProps(problem !== null, problem !== null && 'add-client-problem')}
            value={name}
            onInput={(event) => {
              setName(event.currentTarget.value);
              setProblem(null);
            }}
          />
          {problem && (
            <p class="error" id="add-client-problem">
              {problem}
            </p>
          )}
        </div>
        <button type="submit" aria-disabled={busy ? 'true' : undefined}>
          {busy ? 'Adding…' : 'Add client'}
        </button>
      </form>
    </section>
  );
}

/** A client's row; Rename opens its name in place (Enter saves, Escape cancels, focus back to Rename). */
function ClientRow({
  api,
  item,
  onRenamed,
  onFailed,
}: {
  api: ApiClient;
  item: Client;
  onRenamed: (renamed: Client) => void;
  onFailed: (error: unknown) => void;
}) {
  const [editing, setEditing] = useState(false);
  const [name, setName] = useState(item.name);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);
  const renameButton = useRef<HTMLButtonElement>(null);
  useLayoutEffect(() => {
    if (editing) input.current?.focus();
  }, [editing, problem]);

  const close = () => {
    setEditing(false);
    setProblem(null);
    queueMicrotask(() => renameButton.current?.focus());
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    setBusy(true);
    setProblem(null);
    try {
      const renamed = await api.renameClient(item.id, name);
      setEditing(false);
      onRenamed(renamed);
    } catch (error) {
      onFailed(error);
      setProblem(refusal(error, name));
    } finally {
      setBusy(false);
    }
  };

  const inputId = `client-${item.id}-name`;
  const problemId = `${inputId}-problem`;
  return (
    <tr data-client-id={item.id}>
      <td data-label="ID">{item.id}</td>
      <td data-label="Name" class="subject">
        {editing ? (
          <form onSubmit={submit} class="rename">
            <div class="field">
              <label for={inputId}>New name for {item.name}</label>
              <input
                id={inputId}
                ref={input}
                type="text"
                autocomplete="off"
                required
                maxLength={200}
                {...fieldErrorProps(problem !== null, problem !== null && problemId)}
                value={name}
                onInput={(event) => setName(event.currentTarget.value)}
                onKeyDown={(event) => {
                  if (event.key === 'Escape') close();
                }}
              />
              {problem && (
                <p class="error" id={problemId}>
                  {problem}
                </p>
              )}
            </div>
            <div class="row-actions">
              <button type="submit" aria-disabled={busy ? 'true' : undefined}>
                Save name
              </button>
              <button type="button" class="secondary" onClick={close}>
                Cancel
              </button>
            </div>
          </form>
        ) : (
          item.name
        )}
      </td>
      <td class="action">
        {!editing && (
          <button
            type="button"
            class="secondary"
            ref={renameButton}
            aria-label={`Rename ${item.name}`}
            data-hand-off="clients-outcome"
            onClick={() => {
              setName(item.name);
              setEditing(true);
            }}
          >
            Rename
          </button>
        )}
      </td>
    </tr>
  );
}
