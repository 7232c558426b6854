// How a form field is tied to its refusal: aria-invalid and aria-describedby, on every form.

/** The ARIA attributes of a field: `invalid` marks it, and it is described by each message id that is shown. */
export function fieldErrorProps(
  invalid: boolean,
  ...messageIds: readonly (string | null | false | undefined)[]
): { 'aria-invalid': 'true' | undefined; 'aria-describedby': string | undefined } {
  const ids = messageIds.filter((id): id is string => typeof id === 'string' && id !== '');
  return {
    'aria-invalid': invalid ? 'true' : undefined,
    'aria-describedby': ids.length > 0 ? ids.join(' ') : undefined,
  };
}
