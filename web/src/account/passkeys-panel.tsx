// The Account page's passkeys: listed, added (asking for the password again when needed), renamed, removed.
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { type ApiClient, PASSKEY_NAME_MAX, type Passkey, type User } from '../../../src/client/index.ts';
import { fieldErrorProps } from '../shared/field-error.ts';
import { Outcome, Problem } from '../shared/live-regions.tsx';
import { TextField } from '../shared/text-field.tsx';
import { when } from './account-wording.ts';
import { usePasskeys } from './use-passkeys.ts';

interface Props {
  readonly client: ApiClient;
  readonly user: User;
  readonly onSignedOut: (notice: string) => void;
}

/** The user's passkeys: listed, added (asking for the password again when needed), renamed, removed. */
export function PasskeysPanel({ client, user, onSignedOut }: Props) {
  const passkeys = usePasskeys(client, onSignedOut);
  const [name, setName] = useState('Passkey');
  const [password, setPassword] = useState('');
  const passwordInput = useRef<HTMLInputElement>(null);

  // The password prompt takes focus when it appears: the add that asked for it is waiting on it.
  useLayoutEffect(() => {
    if (passkeys.needsPassword) passwordInput.current?.focus();
  }, [passkeys.needsPassword]);

  const nameInvalid = name.trim() === '';
  const add = (event: Event) => {
    event.preventDefault();
    if (!nameInvalid && !passkeys.busy) void passkeys.add(name.trim());
  };
  const confirm = async (event: Event) => {
    event.preventDefault();
    if (await passkeys.confirmPassword(user.email, password, name.trim())) setPassword('');
  };

  return (
    <section class="panel" aria-labelledby="passkeys-title">
      <h2 id="passkeys-title">Passkeys</h2>
      <p class="hint">
        A passkey signs you in with your device’s screen lock instead of your password, on this device or any
        device your passkeys sync to, even while sign-in is busy.
      </p>
      <Outcome id="passkeys-outcome" text={passkeys.outcome} />
      <Problem id="passkeys-problem" text={passkeys.problem} />
      {passkeys.list === null ? (
        <p aria-busy="true">Loading your passkeys…</p>
      ) : passkeys.list.length === 0 ? (
        <p class="empty">You have no passkeys yet.</p>
      ) : (
        <ul class="passkeys" aria-label="Your passkeys">
          {passkeys.list.map((passkey) => (
            <PasskeyItem key={passkey.id} passkey={passkey} state={passkeys} />
          ))}
        </ul>
      )}
      {passkeys.needsPassword ? (
        <form onSubmit={confirm} aria-labelledby="reauth-title">
          <h3 id="reauth-title">Confirm it is you</h3>
          <TextField
            id="reauth-password"
            label="Your password"
            type="password"
            autocomplete="current-password"
            required
            inputRef={passwordInput}
            {...fieldErrorProps(passkeys.problem !== null, 'passkeys-problem')}
            value={password}
            onValue={setPassword}
          />
          <button type="submit" aria-disabled={passkeys.busy ? 'true' : undefined}>
            Confirm and add the passkey
          </button>
        </form>
      ) : (
        <form onSubmit={add} aria-labelledby="add-title">
          <h3 id="add-title">Add a passkey</h3>
          <TextField
            id="passkey-name"
            label="Name of the new passkey"
            type="text"
            required
            maxLength={PASSKEY_NAME_MAX}
            problem={nameInvalid ? 'Give the passkey a name, such as the device it is on.' : null}
            problemId="passkey-name-hint"
            value={name}
            onValue={setName}
          />
          <button type="submit" aria-disabled={passkeys.busy || nameInvalid ? 'true' : undefined}>
            {passkeys.busy ? 'Waiting for your device…' : 'Add a passkey'}
          </button>
        </form>
      )}
    </section>
  );
}

/** One passkey: its name and dates, and a rename form that opens in place. */
function PasskeyItem({ passkey, state }: { passkey: Passkey; state: ReturnType<typeof usePasskeys> }) {
  const [renaming, setRenaming] = useState(false);
  const [name, setName] = useState(passkey.name);
  const input = useRef<HTMLInputElement>(null);
  const renameButton = useRef<HTMLButtonElement>(null);
  const inputId = `passkey-${passkey.id}-name`;
  const hintId = `passkey-${passkey.id}-hint`;
  const invalid = name.trim() === '';

  // The form takes focus when it opens; when it closes, focus goes back to the Rename button it
  // came from, not to the top of the page. Both with the render that shows them.
  const opened = useRef(false);
  useLayoutEffect(() => {
    if (renaming) input.current?.focus();
    else if (opened.current) renameButton.current?.focus();
    opened.current = renaming;
  }, [renaming]);

  const close = () => {
    setRenaming(false);
    setName(passkey.name);
  };
  const save = async (event: Event) => {
    event.preventDefault();
    if (invalid) return;
    if (await state.rename(passkey, name.trim())) close();
  };

  return (
    <li class="passkey">
      {renaming ? (
        <form onSubmit={save} class="rename">
          <label for={inputId}>New name for “{passkey.name}”</label>
          <input
            id={inputId}
            ref={input}
            type="text"
            required
            maxLength={PASSKEY_NAME_MAX}
            {...fieldErrorProps(invalid, invalid && hintId)}
            value={name}
            onInput={(event) => setName(event.currentTarget.value)}
            onKeyDown={(event) => event.key === 'Escape' && close()}
          />
          {invalid && (
            <p class="error" id={hintId}>
              The name cannot be empty.
            </p>
          )}
          <button type="submit">Save</button>
          <button type="button" class="secondary" onClick={close}>
            Cancel
          </button>
        </form>
      ) : (
        <>
          <PasskeyFacts passkey={passkey} />
          <span class="actions">
            <button
              type="button"
              class="secondary"
              ref={renameButton}
              onClick={() => setRenaming(true)}
              aria-label={`Rename ${passkey.name}`}
            >
              Rename
            </button>
            <button
              type="button"
              class="secondary"
              onClick={async () => {
                await state.remove(passkey);
                // The item is gone with its button: focus goes to the outcome, not the page's top.
                document.getElementById('passkeys-outcome')?.focus();
              }}
              aria-label={`Remove ${passkey.name}`}
            >
              Remove
            </button>
          </span>
        </>
      )}
    </li>
  );
}

/** A passkey's name and when it was added and last used, as the Account and People pages list it. */
export function PasskeyFacts({ passkey }: { passkey: Passkey }) {
  return (
    <>
      <span class="passkey-name">{passkey.name}</span>
      <span class="hint">
        Added {when(passkey.createdAt)}; last used {when(passkey.lastUsedAt)}.
      </span>
    </>
  );
}
