// The People page's list as a plain function: an account changed or added in place.
import type { AdminUser } from '../../../src/client/index.ts';

/** The list with `person` in place of the account with its id, or added at the end when it is new. */
export function withPerson(list: readonly AdminUser[], person: AdminUser): AdminUser[] {
  const at = list.findIndex((shown) => shown.id === person.id);
  return at === -1 ? [...list, person] : list.map((shown, index) => (index === at ? person : shown));
}
