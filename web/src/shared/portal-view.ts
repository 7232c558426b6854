// Which page a signed-in person sees, chosen by the URL's hash: Tasks (or one task), People, Clients, Admin,
// Account.
import type { User } from '../../../src/client/index.ts';

export type View = 'tasks' | 'people' | 'clients' | 'admin' | 'account';

export const VIEW_LABELS: Readonly<Record<View, string>> = {
  tasks: 'Tasks',
  people: 'People',
  clients: 'Clients',
  admin: 'Admin',
  account: 'Account',
};

/** The hash that opens each view, so a reload or the Back button keeps the page. */
export const VIEW_HASHES: Readonly<Record<View, string>> = {
  tasks: '#tasks',
  people: '#people',
  clients: '#clients',
  admin: '#admin',
  account: '#account',
};

/** The pages `user` may open, in navigation order: employees have only Tasks (and so no navigation). */
export function viewsFor(user: Pick<User, 'role'>): readonly View[] {
  return user.role === 'admin' ? ['tasks', 'people', 'clients', 'admin'] : ['tasks'];
}

/**
 * The view a hash asks for, when `user` may see it; Tasks otherwise (an employee sent to #admin).
 * Everyone has an Account page, linked from the top bar beside their name rather than the navigation.
 */
export function viewFromHash(user: Pick<User, 'role'>, hash: string): View {
  const asked = (Object.keys(VIEW_HASHES) as View[]).find((view) => VIEW_HASHES[view] === hash);
  return asked && (asked === 'account' || viewsFor(user).includes(asked)) ? asked : 'tasks';
}

/** The hash of one task's own view: `#task/42`, so that a reload or a shared link opens it again. */
export function taskHash(id: number): string {
  return `#task/${id}`;
}

/** The task a hash opens (`#task/42` → 42), or null for any other hash. */
export function taskIdFromHash(hash: string): number | null {
  const match = /^#task\/([1-9]\d{0,15})$/.exec(hash);
  return match ? Number(match[1]) : null;
}
