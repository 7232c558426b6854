// The view a temporary password leads to: nothing else opens until a password of one's own.
import type { ApiClient, User } from '../../../src/client/index.ts';
import { Page } from '../shared/page.tsx';
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
  return (
    <Page id="change-password" title={CHANGE_PASSWORD_TITLE} class="card narrow">
      <p>
        You signed in as {user.email} with a temporary password. Choose a password of your own to go on: only
        you will know it.
      </p>
      <PasswordForm
        client={client}
        email={user.email}
        temporary
        onSignedOut={onSignedOut}
        onChanged={onChanged}
      />
    </Page>
  );
}
