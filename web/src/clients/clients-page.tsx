// The Clients page (admins): every client, adding one, renaming one in place; a name taken is said beside its
// field.
import type { Ref } from 'preact';
import { useCallback, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { type ApiClient, type Client, isApiError } from '../../../src/client/index.ts';
import { DataTable } from '../shared/data-table.tsx';
import { Outcome } from '../shared/live-regions.tsx';
import { LoadTroubleBanners } from '../shared/load-trouble-banners.tsx';
import { Page, type PageProps } from '../shared/page.tsx';
import { VIEW_LABELS } from '../shared/portal-view.ts';
import { TextField } from '../shared/text-field.tsx';
import { useLoadTrouble } from '../shared/use-load-trouble.ts';
import { useLoadedList } from '../shared/use-loaded-list.ts';
import { describeError } from '../shared/wording.ts';

/** A refusal in words: a name taken (ignoring case) or one the rules refuse, else the general wording. */
function refusal(error: unknown, name: string): string {
  if (isApiError(error, 'CLIENT_NAME_TAKEN'))
    return `A client named “${name.trim()}” already exists (ignoring case).`;
  if (isApiError(error, 'VALIDATION_ERROR'))
    return 'Give a name of 1 to 200 characters, without control characters.';
  return describeError(error);
}

export function ClientsPage({ client, user, onSignedOut }: PageProps) {
  const outcomeRef = useRef<HTMLParagraphElement>(null);
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
    <Page id="clients" title={VIEW_LABELS.clients}>
      <p class="hint">Signed in as {user.email}. Clients are never deleted: their tasks refer to them.</p>
      <LoadTroubleBanners trouble={trouble} what="The list" onRetry={clients.reload} />
      <AddClient client={client} onAdded={(added) => done(`${added.name} is added.`)} onFailed={failed} />
      <section class="panel" aria-labelledby="client-list-title">
        <h2 id="client-list-title">All clients</h2>
        <Outcome id="clients-outcome" text={outcome} outcomeRef={outcomeRef} />
        {clients.list === null ? (
          clients.loading && <p aria-busy="true">Loading clients…</p>
        ) : (
          <DataTable
            id="clients"
            labelledBy="client-list-title"
            busy={clients.loading}
            columns={['ID', 'Name']}
            actions="Actions"
          >
            {clients.list.map((item) => (
              <ClientRow
                key={item.id}
                api={client}
                item={item}
                onRenamed={(renamed) => done(`${item.name} is now ${renamed.name}.`)}
                onFailed={failed}
              />
            ))}
          </DataTable>
        )}
      </section>
    </Page>
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
  const form = useNameForm('', onFailed, async (name) => {
    const added = await client.createClient(name);
    form.setName('');
    onAdded(added);
  });
  const { busy, problem } = form;
  const input = useRef<HTMLInputElement>(null);
  useLayoutEffect(() => {
    if (problem) input.current?.focus();
  }, [problem]);

  return (
    <section class="panel" aria-labelledby="add-client-title">
      <h2 id="add-client-title">Add a client</h2>
      <form onSubmit={form.submit} class="add-person">
        <NameField
          form={form}
          id="client-name"
          label="Client name"
          inputRef={input}
          problemId="add-client-problem"
          onValue={(value) => {
            form.setName(value);
            form.setProblem(null);
          }}
        />
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
  const form = useNameForm(item.name, onFailed, async (name) => {
    const renamed = await api.renameClient(item.id, name);
    setEditing(false);
    onRenamed(renamed);
  });
  const { busy, problem } = form;
  const input = useRef<HTMLInputElement>(null);
  const renameButton = useRef<HTMLButtonElement>(null);
  useLayoutEffect(() => {
    if (editing) input.current?.focus();
  }, [editing, problem]);

  const close = () => {
    setEditing(false);
    form.setProblem(null);
    queueMicrotask(() => renameButton.current?.focus());
  };

  const inputId = `client-${item.id}-name`;
  return (
    <tr data-client-id={item.id}>
      <td data-label="ID">{item.id}</td>
      <td data-label="Name" class="subject">
        {editing ? (
          <form onSubmit={form.submit} class="rename">
            <NameField
              form={form}
              id={inputId}
              label={`New name for ${item.name}`}
              inputRef={input}
              onKeyDown={(event) => {
                if (event.key === 'Escape') close();
              }}
            />
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
              form.setName(item.name);
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

type NameForm = ReturnType<typeof useNameForm>;

/** A client's name being sent (added, or renamed): one send at a time, its refusal worded for the field. */
function useNameForm(
  initial: string,
  onFailed: (error: unknown) => void,
  send: (name: string) => Promise<void>,
) {
  const [name, setName] = useState(initial);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);

  const submit = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    setBusy(true);
    setProblem(null);
    try {
      await send(name);
    } catch (error) {
      onFailed(error);
      setProblem(refusal(error, name));
    } finally {
      setBusy(false);
    }
  };

  return { name, setName, busy, problem, setProblem, submit };
}

/** The field a client's name is typed in, as the server takes it (1 to 200 characters), its refusal under it. */
function NameField({
  form,
  ...field
}: {
  form: NameForm;
  id: string;
  label: string;
  inputRef: Ref<HTMLInputElement>;
  problemId?: string;
  onValue?: (value: string) => void;
  onKeyDown?: (event: KeyboardEvent) => void;
}) {
  return (
    <TextField
      type="text"
      autocomplete="off"
      required
      maxLength={200}
      problem={form.problem}
      value={form.name}
      onValue={form.setName}
      {...field}
    />
  );
}
