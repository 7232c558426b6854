// The Account page's "Password": change it, which signs out every other browser.
import { useState } from 'preact/hooks';
import type { ApiClient, User } from '../../../src/client/index.ts';
import { Outcome } from '../shared/live-regions.tsx';
import { PasswordForm } from './password-form.tsx';

interface Props {
  readonly client: ApiClient;
  readonly user: User;
  readonly onSignedOut: (notice: string) => void;
  /** The password changed: the lists it touches (sessions, devices, activity) load again. */
  readonly onChanged: () => void;
}

export function PasswordPanel({ client, user, onSignedOut, onChanged }: Props) {
  const [outcome, setOutcome] = useState<string | null>(null);
  return (
    <section class="panel" aria-labelledby="password-title">
      <h2 id="password-title">Password</h2>
      <p class="hint">
        Changing your password signs you out of every other browser at once and forgets your other known
        devices; this browser stays signed in.
      </p>
      <Outcome id="password-outcome" text={outcome} />
      <PasswordForm
        client={client}
        email={user.email}
        onSignedOut={onSignedOut}
        onChanged={() => {
          setOutcome('Your password is changed. Every other browser is signed out.');
          onChanged();
        }}
      />
    </section>
  );
}
