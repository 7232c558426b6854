// The People page (admins): every account, adding one, and each edited, disabled, reset.
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { ApiClient, Role, User } from '../../../src/client/index.ts';
import { DataTable } from '../shared/data-table.tsx';
import { fieldErrorProps } from '../shared/field-error.ts';
import { Outcome, Problem } from '../shared/live-regions.tsx';
import { LoadTroubleBanners } from '../shared/load-trouble-banners.tsx';
import { Page, type PageProps } from '../shared/page.tsx';
import { VIEW_LABELS } from '../shared/portal-view.ts';
import { TextField } from '../shared/text-field.tsx';
import { useLoadTrouble } from '../shared/use-load-trouble.ts';
import { TEMPORARY_PASSWORD_HINT } from './people-wording.ts';
import { PersonRows, RoleField } from './person-rows.tsx';
import { type IssuedPassword, type PeopleHandle, usePeople } from './use-people.ts';

export function PeoplePage({ client, user, onSignedOut }: PageProps) {
  const trouble = useLoadTrouble(onSignedOut);
  const people = usePeople(client, trouble, onSignedOut);

  return (
    <Page id="people" title={VIEW_LABELS.people}>
      <p class="hint">Signed in as {user.email}.</p>
      <LoadTroubleBanners trouble={trouble} what="The list" onRetry={people.reload} />
      {people.issued && <TemporaryPassword issued={people.issued} onDone={people.dismissIssued} />}
      <AddPerson people={people} />
      <section class="panel" aria-labelledby="accounts-title">
        <div class="panel-head">
          <h2 id="accounts-title">Accounts</h2>
        </div>
        <p class="hint">
          Disabling an account or resetting its password signs it out everywhere at once. Enabling it again
          does not bring back what a reset removed.
        </p>
        {/* Where a button that goes with its row or its form hands focus. */}
        <Outcome id="people-outcome" text={people.outcome} />
        <Problem id="people-problem" text={people.problem?.about !== 0 ? people.problem?.text : null} />
        <PeopleTable client={client} me={user} people={people} onSignedOut={onSignedOut} />
      </section>
    </Page>
  );
}

function PeopleTable({
  client,
  me,
  people,
  onSignedOut,
}: {
  client: ApiClient;
  me: User;
  people: PeopleHandle;
  onSignedOut: (notice: string) => void;
}) {
  if (people.list === null) return people.loading ? <p aria-busy="true">Loading accounts…</p> : null;
  return (
    <DataTable
      class="people"
      id="people"
      labelledBy="accounts-title"
      busy={people.loading}
      columns={['Name', 'Email', 'Role', 'State', 'Last sign-in']}
      actions="Actions"
    >
      {people.list.map((person) => (
        <PersonRows
          key={person.id}
          client={client}
          person={person}
          self={person.id === me.id}
          people={people}
          onSignedOut={onSignedOut}
        />
      ))}
    </DataTable>
  );
}

/** Adding an account: email, name, role; the temporary password comes back in its own panel. */
function AddPerson({ people }: { people: PeopleHandle }) {
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [role, setRole] = useState<Role>('employee');
  const adding = people.acting === 0;
  const problem = people.problem?.about === 0 ? people.problem : null;
  const emailTaken = problem?.code === 'EMAIL_TAKEN';
  const emailInput = useRef<HTMLInputElement>(null);
  // An email already in use takes focus back to the field, read out with its refusal.
  useLayoutEffect(() => {
    if (emailTaken) emailInput.current?.focus();
  }, [problem]);

  const submit = async (event: Event) => {
    event.preventDefault();
    if (people.acting !== null) return;
    if (await people.add({ email: email.trim(), name: name.trim(), role })) {
      setEmail('');
      setName('');
      setRole('employee');
    }
  };

  return (
    <section class="panel" aria-labelledby="add-person-title">
      <h2 id="add-person-title">Add a person</h2>
      <form onSubmit={submit} class="add-person">
        {/* A refusal is said in the form's alert, which describes the email when it is about that. */}
        <TextField
          id="person-email"
          label="Email"
          inputRef={emailInput}
          type="email"
          autocomplete="off"
          required
          {...fieldErrorProps(emailTaken, emailTaken && 'add-person-problem')}
          value={email}
          onValue={setEmail}
        />
        <TextField
          id="person-name"
          label="Name"
          type="text"
          autocomplete="off"
          required
          value={name}
          onValue={setName}
        />
        <RoleField id="person-role" role={role} onChange={setRole} />
        <Problem id="add-person-problem" text={problem?.text} />
        <button type="submit" aria-disabled={adding ? 'true' : undefined}>
          {adding ? 'Adding…' : 'Add person'}
        </button>
      </form>
    </section>
  );
}

/** The temporary password of the account just added or reset: shown once, with a copy button. */
function TemporaryPassword({ issued, onDone }: { issued: IssuedPassword; onDone: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  const field = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<string | null>(null);
  const { person } = issued;
  // It takes focus when it appears: it is what the admin came for, and it will not be shown again.
  useLayoutEffect(() => {
    heading.current?.focus();
    setCopied(null);
  }, [issued]);

  const copy = async () => {
    try {
      await navigator.clipboard.writeText(issued.password);
      setCopied('Copied to the clipboard.');
    } catch {
      // No clipboard (a page not served over HTTPS, or permission refused): the password is selected instead.
      field.current?.select();
      setCopied('The password is selected: copy it with Ctrl+C (⌘C on a Mac).');
    }
  };

  return (
    <section class="panel issued" aria-labelledby="temporary-password-title" id="temporary-password">
      <h2 id="temporary-password-title" tabIndex={-1} ref={heading}>
        Temporary password for {person.name}
      </h2>
      <p>
        {issued.reason === 'added'
          ? `${person.email} can sign in with this password.`
          : `${person.email}’s old password no longer works; they sign in with this one.`}{' '}
        {TEMPORARY_PASSWORD_HINT}
      </p>
      <div class="copy-field">
        <label for="temporary-password-value" class="visually-hidden">
          Temporary password for {person.email}
        </label>
        <input
          id="temporary-password-value"
          ref={field}
          type="text"
          readOnly
          spellcheck={false}
          autocomplete="off"
          value={issued.password}
        />
        <button type="button" onClick={() => void copy()}>
          Copy password
        </button>
      </div>
      <p role="status" class="status">
        {copied}
      </p>
      <button type="button" class="secondary" data-hand-off="people-outcome" onClick={onDone}>
        Done: hide the password
      </button>
    </section>
  );
}
