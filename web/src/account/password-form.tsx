// The form that changes a password: current, new, new again; each refusal beside its field.
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { ApiClient } from '../../../src/client/index.ts';
import { fieldErrorProps } from '../shared/field-error.ts';
import { Problem } from '../shared/live-regions.tsx';
import { TextField } from '../shared/text-field.tsx';
import { duration } from '../shared/wording.ts';
import { confirmationProblem } from './account-wording.ts';
import { usePasswordChange } from './use-password-change.ts';

interface Props {
  readonly client: ApiClient;
  /** The account's email, for the password manager's username (a hidden field). */
  readonly email: string;
  /** The current password is a temporary one: on the view it leads to, the form says so. */
  readonly temporary?: boolean;
  readonly onSignedOut: (notice: string) => void;
  /** The password is changed: the form is emptied, and this says what happens next. */
  readonly onChanged: () => void;
}

export function PasswordForm({ client, email, temporary = false, onSignedOut, onChanged }: Props) {
  const currentLabel = temporary ? 'Temporary password' : 'Current password';
  const submitLabel = temporary ? 'Set my password' : 'Change password';
  const password = usePasswordChange(client, onSignedOut);
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [again, setAgain] = useState('');
  // The second copy is compared once it has been left or the form sent, not at every key typed into it.
  const [compared, setCompared] = useState(false);
  const fields = {
    current: useRef<HTMLInputElement>(null),
    new: useRef<HTMLInputElement>(null),
    again: useRef<HTMLInputElement>(null),
  };
  const { problem, wait } = password;
  const mismatch = compared ? confirmationProblem(next, again) : null;
  const textFor = (field: 'current' | 'new' | 'form') => (problem?.field === field ? problem.text : null);
  /** A refusal said beside a field goes once the person types there again: it was about the old text. */
  const clearProblemOf = (field: 'current' | 'new') => {
    if (problem?.field === field) password.refuse(null);
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    if (password.busy || wait > 0) return;
    setCompared(true);
    if (confirmationProblem(next, again) !== null) {
      fields.again.current?.focus();
      return;
    }
    if (await password.change(current, next)) {
      setCurrent('');
      setNext('');
      setAgain('');
      setCompared(false);
      onChanged();
    }
  };

  // A refusal takes focus to the field it concerns, so that it is read with it and can be typed again.
  useLayoutEffect(() => {
    if (problem?.field === 'current' || problem?.field === 'new') fields[problem.field].current?.focus();
  }, [problem]);

  return (
    <form onSubmit={submit} aria-label={submitLabel}>
      <input type="text" autocomplete="username" value={email} hidden readOnly />
      {/* Each refusal is said in an alert region of its field's, present from the start. */}
      <TextField
        id="current-password"
        label={currentLabel}
        type="password"
        autocomplete="current-password"
        required
        inputRef={fields.current}
        {...fieldErrorProps(textFor('current') !== null, textFor('current') && 'current-password-problem')}
        value={current}
        onValue={(value) => {
          setCurrent(value);
          clearProblemOf('current');
        }}
      >
        <Problem id="current-password-problem" text={textFor('current')} />
        {wait > 0 && <p role="timer">You can try again in {duration(wait)}.</p>}
      </TextField>
      <TextField
        id="new-password"
        label="New password"
        type="password"
        autocomplete="new-password"
        required
        inputRef={fields.new}
        {...fieldErrorProps(
          textFor('new') !== null,
          textFor('new') && 'new-password-problem',
          'new-password-hint',
        )}
        value={next}
        onValue={(value) => {
          setNext(value);
          clearProblemOf('new');
        }}
      >
        <p class="hint" id="new-password-hint">
          At least 12 characters; not your email, and not a common or breached password. A few unrelated words
          make a strong one.
        </p>
        <Problem id="new-password-problem" text={textFor('new')} />
      </TextField>
      <TextField
        id="new-password-again"
        label="New password again"
        type="password"
        autocomplete="new-password"
        required
        inputRef={fields.again}
        {...fieldErrorProps(mismatch !== null, mismatch && 'new-password-again-problem')}
        value={again}
        onValue={setAgain}
        onBlur={() => setCompared(again !== '')}
      >
        <Problem id="new-password-again-problem" text={mismatch} />
      </TextField>
      <Problem id="password-form-problem" text={textFor('form')} />
      {/* Not disabled while it works, so that focus stays on it; a second press waits for the first. */}
      <button type="submit" disabled={wait > 0} aria-disabled={password.busy ? 'true' : undefined}>
        {password.busy ? 'Changing your password…' : submitLabel}
      </button>
    </form>
  );
}
