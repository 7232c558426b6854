// Where a panel says what an action did or why it failed: regions present from the start, so that their words
// are announced when they come.
import type { Ref } from 'preact';

/** The polite line an outcome is said in; focusable, so that a button gone with its item can hand focus here. */
export function Outcome({
  id,
  text,
  outcomeRef,
}: {
  id?: string;
  text: string | null;
  outcomeRef?: Ref<HTMLParagraphElement>;
}) {
  return (
    <p role="status" class="status" id={id} tabIndex={-1} ref={outcomeRef}>
      {text}
    </p>
  );
}

/** The alert a refusal is said in. */
export function Problem({ id, text }: { id?: string; text: string | null | undefined }) {
  return (
    <div role="alert" id={id}>
      {text && <p class="error">{text}</p>}
    </div>
  );
}
