// Route options hold one hook or several; plugins that attach hooks per route need them as a list.

export function hookList<T>(hooks: T | T[] | undefined): T[] {
  return hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks];
}
