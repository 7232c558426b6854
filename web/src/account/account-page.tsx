// The Account page: the password, sessions, known devices, passkeys and recent activity.
import { useCallback } from 'preact/hooks';
import { LoadTroubleBanners } from '../shared/load-trouble-banners.tsx';
import { Page, type PageProps } from '../shared/page.tsx';
import { useLoadTrouble } from '../shared/use-load-trouble.ts';
import { useSecurityEvents } from '../shared/use-security-events.ts';
import { ActivityPanel } from './activity-panel.tsx';
import { DevicesPanel } from './devices-panel.tsx';
import { PasskeysPanel } from './passkeys-panel.tsx';
import { PasswordPanel } from './password-panel.tsx';
import { SessionsPanel } from './sessions-panel.tsx';
import { useAccountList } from './use-account-list.ts';

export function AccountPage({ client, user, onSignedOut }: PageProps) {
  const trouble = useLoadTrouble(onSignedOut);
  // The lists are held here, so that a password change can load them again.
  const loadSessions = useCallback(() => client.sessions(), [client]);
  const sessions = useAccountList(loadSessions, trouble, onSignedOut);
  const loadDevices = useCallback(() => client.devices(), [client]);
  const devices = useAccountList(loadDevices, trouble, onSignedOut);
  const loadEvents = useCallback((cursor?: string) => client.accountEvents({ cursor }), [client]);
  const events = useSecurityEvents(loadEvents, trouble);

  // Also after a new password: it ends the other sessions, forgets the other devices, and is an event itself.
  const reloadLists = () => {
    sessions.reload();
    devices.reload();
    events.refresh();
  };

  return (
    <Page id="account" title="Account" class="card">
      <p class="hint">Signed in as {user.email}.</p>
      <LoadTroubleBanners trouble={trouble} what="The lists" onRetry={reloadLists} />
      <PasswordPanel client={client} user={user} onSignedOut={onSignedOut} onChanged={reloadLists} />
      <SessionsPanel client={client} sessions={sessions} />
      <DevicesPanel client={client} devices={devices} />
      <PasskeysPanel client={client} user={user} onSignedOut={onSignedOut} />
      <ActivityPanel events={events} self={user.id} />
    </Page>
  );
}
