// A labelled input in its field, with what is wrong with it said under it and tied to it.
import type { ComponentChildren, InputHTMLAttributes, Ref } from 'preact';
import { fieldErrorProps } from './field-error.ts';

type Props = InputHTMLAttributes<HTMLInputElement> & {
  readonly id: string;
  readonly label: ComponentChildren;
  readonly value: string;
  readonly onValue: (value: string) => void;
  /** Said under the input, which it marks invalid and describes; none when null. */
  readonly problem?: string | null;
  /** The id of the problem's paragraph: `${id}-problem` unless given. */
  readonly problemId?: string;
  readonly inputRef?: Ref<HTMLInputElement>;
  /** What follows the input in its field: a hint, a timer, an alert region. */
  readonly children?: ComponentChildren;
};

/**
 * The input's own attributes pass through; an `aria-invalid` or `aria-describedby` among them wins over
 * the problem's (a refusal said elsewhere, in the form's alert region).
 */
export function TextField({
  id,
  label,
  value,
  onValue,
  problem = null,
  problemId = `${id}-problem`,
  inputRef,
  children,
  ...input
}: Props) {
  const refused = problem !== null;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        id={id}
        ref={inputRef}
        {...fieldErrorProps(refused, refused && problemId)}
        {...input}
        value={value}
        onInput={(event) => onValue(event.currentTarget.value)}
      />
      {refused && (
        <p class="error" id={problemId}>
          {problem}
        </p>
      )}
      {children}
    </div>
  );
}
