// Why a password is refused: imports nothing, so the typed client shares this list (src/client/types.ts).

/** Why a password is refused: the `reason` of 422 PASSWORD_REFUSED. */
export const PASSWORD_REFUSALS = [
  'too_short',
  'too_long',
  'contains_email',
  'common',
  'weak',
  'breached',
  'unchanged',
] as const;
export type PasswordRefusal = (typeof PASSWORD_REFUSALS)[number];
