// "Known devices": the browsers the account signed in from, each forgotten with a click.
import type { ApiClient, Device } from '../../../src/client/index.ts';
import { whileBusy } from '../shared/focus-hand-off.ts';
import { Outcome, Problem } from '../shared/live-regions.tsx';
import { browserName, describeEndError, when } from './account-wording.ts';
import type { AccountListHandle } from './use-account-list.ts';

/** `devices` is held by the page, so that a password change can load the list again. */
export function DevicesPanel({ client, devices }: { client: ApiClient; devices: AccountListHandle<Device> }) {
  const { list, loading, outcome, problem, acting } = devices;

  const forget = (device: Device) =>
    devices.act(
      String(device.id),
      async () => {
        await client.forgetDevice(device.id);
        return `${browserName(device.userAgent)} is forgotten: it signs in as a new device from now on.`;
      },
      (error) => describeEndError(error, 'device'),
    );

  return (
    <section class="panel" aria-labelledby="devices-title">
      <h2 id="devices-title">Known devices</h2>
      <p class="hint">
        Browsers you signed in from before. They can still sign in while your account is locked by someone
        else’s wrong passwords. Forget one you no longer use: it stays signed in until you end its session
        above.
      </p>
      <Outcome id="devices-outcome" text={outcome} />
      <Problem id="devices-problem" text={problem} />
      {list === null ? (
        loading && <p aria-busy="true">Loading your known devices…</p>
      ) : list.length === 0 ? (
        <p class="empty">No known devices.</p>
      ) : (
        <ul class="passkeys" id="devices" aria-label="Your known devices" aria-busy={loading}>
          {list.map((device) => (
            <li class="passkey" key={device.id}>
              <span class="passkey-name">{browserName(device.userAgent)}</span>
              <span class="hint">
                First signed in {when(device.createdAt)}; last used {when(device.lastUsedAt)}.
              </span>
              <span class="actions">
                <button
                  type="button"
                  class="secondary"
                  data-hand-off="devices-outcome"
                  aria-label={`Forget ${browserName(device.userAgent)}, first signed in ${when(device.createdAt)}`}
                  {...whileBusy(acting !== null, () => void forget(device))}
                >
                  {acting === String(device.id) ? 'Forgetting…' : 'Forget'}
                </button>
              </span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
