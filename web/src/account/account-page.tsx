// The Account page: the password, sessions, known devices, passkeys and recent activity.
import { useCallback, useRef } from 'preact/hooks';
import type { ApiClient, User } from '../../../src/client/index.ts';
import { useFocusHandOff, useFocusOnShow } from '../shared/focus-hand-off.ts';
import { LoadTroubleBanners } from '../shared/load-trouble-banners.tsx';
import { useDocumentTitle } from '../shared/page-title.ts';
import { useLoadTrouble } from '../shared/use-load-trouble.ts';
import { useSecurityEvents } from '../shared/use-security-events.ts';
import { ActivityPanel } from './activity-panel.tsx';
import { DevicesPanel, useDevices } from './devices-panel.tsx';
import { PasskeysPanel } from './passkeys-panel.tsx';
import { PasswordPanel } from './password-panel.tsx';
import { SessionsPanel, useSessions } from './sessions-panel.tsx';

interface Props {
  readonly client: ApiClient;
  readonly user: User;
  readonly onSignedOut: (notice: string) => void;
}

export function AccountPage({ client, user, onSignedOut }: Props) {
  useDocumentTitle('Account');
  const heading = useRef<HTMLHeadingElement>(null);
  const section = useRef<HTMLElement>(null);
  useFocusOnShow(heading);
  useFocusHandOff(section, heading);
  const trouble = useLoadTrouble(onSignedOut);
  const sessions = useSessions(client, trouble, onSignedOut);
  const devices = useDevices(client, trouble, onSignedOut);
  const loadEvents = useCallback((cursor?: string) => client.accountEvents({ cursor }), [client]);
  const events = useSecurityEvents(loadEvents, trouble);

  // Also after a new password: it ends the other sessions, forgets the other devices, and is an event itself.
  const reloadLists = () => {
    sessions.reload();
    devices.reload();
    events.refresh();
  };

  return (
    <section class="card" aria-labelledby="account-title" ref={section}>
      <h1 id="account-title" tabIndex={-1} ref={heading}>
        Account
      </h1>
      <p class="hint">Signed in as {user.email}.</p>
      <LoadTroubleBanners trouble={trouble} what="The lists" onRetry={reloadLists} />
      <PasswordPanel client={client} user={user} onSignedOut={onSignedOut} onChanged={reloadLists} />
      <SessionsPanel client={client} sessions={sessions} />
      <DevicesPanel client={client} devices={devices} />
      <PasskeysPanel client={client} user={user} onSignedOut={onSignedOut} />
      <ActivityPanel events={events} self={user.id} />
    </section>
  );
}
