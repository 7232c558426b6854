// One account on the People page: its row, and the panel its buttons open.
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { AdminUser, ApiClient, Role } from '../../../src/client/index.ts';
import { when } from '../account/account-wording.ts';
import { PasskeyFacts } from '../account/passkeys-panel.tsx';
import { whileBusy } from '../shared/focus-hand-off.ts';
import { Outcome, Problem } from '../shared/live-regions.tsx';
import { TextField } from '../shared/text-field.tsx';
import { personState, ROLE_LABELS } from './people-wording.ts';
import type { PeopleHandle } from './use-people.ts';
import { usePersonPasskeys } from './use-person-passkeys.ts';

/** The panel open under a row, if any. */
type Opened = 'edit' | 'reset' | 'passkeys' | null;

/** The row's cells and its panel span this many columns. */
const COLUMNS = 6;

interface Props {
  readonly client: ApiClient;
  readonly person: AdminUser;
  /** The admin signed in: the page offers no Disable and no role change for their own account. */
  readonly self: boolean;
  readonly people: PeopleHandle;
  readonly onSignedOut: (notice: string) => void;
}

export function PersonRows({ client, person, self, people, onSignedOut }: Props) {
  const [opened, setOpened] = useState<Opened>(null);
  const buttons = {
    edit: useRef<HTMLButtonElement>(null),
    reset: useRef<HTMLButtonElement>(null),
    passkeys: useRef<HTMLButtonElement>(null),
  };
  // A panel that closes gives focus back to the button that opened it, not to the top of the page,
  // unless what it did put focus elsewhere (a reset's temporary password).
  const wasOpen = useRef<Opened>(null);
  const returnFocus = useRef(true);
  useLayoutEffect(() => {
    if (opened === null && wasOpen.current !== null && returnFocus.current)
      buttons[wasOpen.current].current?.focus();
    wasOpen.current = opened;
    returnFocus.current = true;
  }, [opened]);
  const close = (giveBack = true) => {
    returnFocus.current = giveBack;
    setOpened(null);
  };

  const busy = people.acting !== null;
  const toggle = (panel: Exclude<Opened, null>) => setOpened((now) => (now === panel ? null : panel));
  const { email } = person;
  /** A button that opens its panel under the row, or closes it. */
  const toggleButton = (panel: Exclude<Opened, null>, label: string, text: string) => (
    <button
      type="button"
      class="secondary"
      ref={buttons[panel]}
      aria-expanded={opened === panel}
      aria-label={label}
      onClick={() => toggle(panel)}
    >
      {text}
    </button>
  );

  return (
    <>
      <tr data-person={email} class={person.disabled ? 'disabled' : undefined}>
        <td data-label="Name" class="subject">
          {person.name}
          {self && <span class="hint"> (you)</span>}
        </td>
        <td data-label="Email" class="subject">
          {email}
        </td>
        <td data-label="Role">{ROLE_LABELS[person.role]}</td>
        <td data-label="State">{personState(person)}</td>
        <td data-label="Last sign-in">{when(person.lastSignInAt)}</td>
        <td class="action">
          <span class="row-actions">
            {toggleButton('edit', `Edit ${email}`, 'Edit')}
            {!self && (
              <button
                type="button"
                class="secondary"
                aria-label={`${person.disabled ? 'Enable' : 'Disable'} ${email}`}
                {...whileBusy(busy, () => void people.setDisabled(person, !person.disabled))}
              >
                {people.acting === person.id ? 'Saving…' : person.disabled ? 'Enable' : 'Disable'}
              </button>
            )}
            {toggleButton('reset', `Reset password of ${email}`, 'Reset password')}
            {toggleButton('passkeys', `Passkeys of ${email}`, 'Passkeys')}
          </span>
        </td>
      </tr>
      {opened !== null && (
        <tr class="row-panel">
          <td colSpan={COLUMNS}>
            {opened === 'edit' && <EditPerson person={person} self={self} people={people} onClose={close} />}
            {opened === 'reset' && <ConfirmReset person={person} people={people} onClose={close} />}
            {opened === 'passkeys' && (
              <PersonPasskeys client={client} person={person} onSignedOut={onSignedOut} onClose={close} />
            )}
          </td>
        </tr>
      )}
    </>
  );
}

/** Name and role, edited in place: Enter saves, Escape cancels, focus goes back to Edit. */
function EditPerson({
  person,
  self,
  people,
  onClose,
}: {
  person: AdminUser;
  self: boolean;
  people: PeopleHandle;
  onClose: () => void;
}) {
  const [name, setName] = useState(person.name);
  const [role, setRole] = useState<Role>(person.role);
  const input = useRef<HTMLInputElement>(null);
  useLayoutEffect(() => input.current?.focus(), []);
  const invalid = name.trim() === '';

  const save = async (event: Event) => {
    event.preventDefault();
    if (invalid || people.acting !== null) return;
    const changes = {
      ...(name.trim() !== person.name && { name: name.trim() }),
      ...(role !== person.role && { role }),
    };
    if (Object.keys(changes).length === 0 || (await people.edit(person, changes))) onClose();
  };

  return (
    <form
      class="rename"
      aria-label={`Edit ${person.email}`}
      onSubmit={save}
      onKeyDown={(event) => event.key === 'Escape' && onClose()}
    >
      <TextField
        id={`person-${person.id}-name`}
        label="Name"
        inputRef={input}
        type="text"
        required
        problem={invalid ? 'The name cannot be empty.' : null}
        problemId={`person-${person.id}-name-hint`}
        value={name}
        onValue={setName}
      />
      {self ? (
        <p class="hint">You cannot change your own role: another admin can.</p>
      ) : (
        <RoleField id={`person-${person.id}-role`} role={role} onChange={setRole} />
      )}
      <span class="row-actions">
        <button type="submit" aria-disabled={people.acting !== null ? 'true' : undefined}>
          Save
        </button>
        <button type="button" class="secondary" onClick={() => onClose()}>
          Cancel
        </button>
      </span>
    </form>
  );
}

/** A reset ends the account's sessions and forgets its devices: said before it is done. */
function ConfirmReset({
  person,
  people,
  onClose,
}: {
  person: AdminUser;
  people: PeopleHandle;
  onClose: (returnFocus?: boolean) => void;
}) {
  const confirm = useRef<HTMLButtonElement>(null);
  useLayoutEffect(() => confirm.current?.focus(), []);
  const reset = async () => {
    // The temporary password's panel takes focus when it shows; this one closes without taking it back.
    if (await people.reset(person)) onClose(false);
  };
  return (
    <fieldset class="row-group" onKeyDown={(event) => event.key === 'Escape' && onClose()}>
      <legend>Reset the password of {person.email}?</legend>
      <p>
        Their old password stops working, they are signed out everywhere and their known devices are
        forgotten. You get a temporary password to give them.
      </p>
      <span class="row-actions">
        <button type="button" ref={confirm} {...whileBusy(people.acting !== null, () => void reset())}>
          Reset the password of {person.name}
        </button>
        <button type="button" class="secondary" onClick={() => onClose()}>
          Cancel
        </button>
      </span>
    </fieldset>
  );
}

/** The account's passkeys, each removed with a click. */
function PersonPasskeys({
  client,
  person,
  onSignedOut,
  onClose,
}: {
  client: ApiClient;
  person: AdminUser;
  onSignedOut: (notice: string) => void;
  onClose: () => void;
}) {
  const passkeys = usePersonPasskeys(client, person.id, onSignedOut);
  const outcomeId = `person-${person.id}-passkeys-outcome`;
  return (
    <fieldset class="row-group" onKeyDown={(event) => event.key === 'Escape' && onClose()}>
      <legend>Passkeys of {person.email}</legend>
      <Outcome id={outcomeId} text={passkeys.outcome} />
      <Problem text={passkeys.problem} />
      {passkeys.list === null ? (
        <p aria-busy="true">Loading passkeys…</p>
      ) : passkeys.list.length === 0 ? (
        <p class="empty">{person.name} has no passkeys.</p>
      ) : (
        <ul class="passkeys" aria-label={`Passkeys of ${person.email}`}>
          {passkeys.list.map((passkey) => (
            <li class="passkey" key={passkey.id}>
              <PasskeyFacts passkey={passkey} />
              <span class="actions">
                <button
                  type="button"
                  class="secondary"
                  data-hand-off={outcomeId}
                  aria-label={`Remove passkey ${passkey.name} of ${person.email}`}
                  {...whileBusy(passkeys.removing !== null, () => void passkeys.remove(passkey))}
                >
                  Remove
                </button>
              </span>
            </li>
          ))}
        </ul>
      )}
    </fieldset>
  );
}

/** The role picker of the add form and of a person's edit form. */
export function RoleField({
  id,
  role,
  onChange,
}: {
  id: string;
  role: Role;
  onChange: (role: Role) => void;
}) {
  return (
    <div class="field">
      <label for={id}>Role</label>
      <select id={id} value={role} onChange={(event) => onChange(event.currentTarget.value as Role)}>
        {Object.entries(ROLE_LABELS).map(([value, label]) => (
          <option key={value} value={value}>
            {label}
          </option>
        ))}
      </select>
    </div>
  );
}
