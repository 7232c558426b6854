// A labelled picker of named things (employees, clients, statuses, sorts), for the filter and reassignment
// forms.

/** Anything listed by id and name: an employee, a client. */
export interface Named {
  readonly id: number;
  readonly name: string;
}

/** One choice of a picker: a named thing, or a value and its words (a status, a sort). */
interface Choice {
  readonly id: number | string;
  readonly name: string;
}

interface Props {
  readonly id: string;
  readonly label: string;
  /** The text of the empty choice ("Anyone", "Any client", "Choose a person"); none when one must be chosen. */
  readonly emptyChoice?: string;
  readonly choices: readonly Choice[];
  readonly value: string;
  readonly onChange: (value: string) => void;
}

export function NamedSelect({ id, label, emptyChoice, choices, value, onChange }: Props) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} value={value} onChange={(event) => onChange(event.currentTarget.value)}>
        {emptyChoice !== undefined && <option value="">{emptyChoice}</option>}
        {choices.map((choice) => (
          <option key={choice.id} value={choice.id}>
            {choice.name}
          </option>
        ))}
      </select>
    </div>
  );
}
