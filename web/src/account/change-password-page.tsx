// The view a temporary password leads to: nothing else opens until a password of one's own.
import { useRef } from 'preact/hooks';
import type { ApiClient, User } from '../../../src/client/index.ts';
import { useFocusHandOff, useFocusOnShow } from '../shared/focus-hand-off.ts';
import { useDocumentTitle } from '../shared/page-title.ts';
import { PasswordForm } from './password-form.tsx';

interface Props {
  readonly client: ApiClient;
  readonly user: User;
  readonly onSignedOut: (notice: string) => void;
  /** The new password is set: the portal opens. */
  readonly onChanged: () => void;
}

export const CHANGE_PASSWORD_TITLE = 'Choose a new password';

export function ChangePasswordPage({ client, user, onSignedOut, onChanged }: Props) {
  const heading = useRef<HTMLHeadingElement>(null);
  const section = useRef<HTMLElement>(null);
  useFocusOnShow(heading);
  useFocusHandOff(section, heading);
  useDocumentTitle(CHANGE_PASSWORD_TITLE);
  return (
    <section class="card narrow" aria-labelledby="change-password-title" ref={section}>
      <h1 id="change-password-title" tabIndex={-1} ref={heading}>
        {CHANGE_PASSWORD_TITLE}
      </h1>
      <p>
        You signed in as {user.email} with a temporary password. Choose a password of your own to go on: only
        you will know it.
      </p>
      <PasswordForm
        client={client}
        email={user.email}
        currentLabel="Temporary password"
        submitLabel="Set my password"
        onSignedOut={onSignedOut}
        onChanged={onChanged}
      />
    </section>
  );
}
