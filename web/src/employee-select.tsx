// A labelled picker of employees, shared by the filter form and the reassignment form.
import type { User } from '../../src/client/index.ts';

interface Props {
  readonly id: string;
  readonly label: string;
  /** The text of the empty choice ("Anyone", "Choose a person"). */
  readonly emptyChoice: string;
  readonly employees: readonly User[];
  readonly value: string;
  readonly onChange: (value: string) => void;
}

export function EmployeeSelect({ id, label, emptyChoice, employees, value, onChange }: Props) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} value={value} onChange={(event) => onChange(event.currentTarget.value)}>
        <option value="">{emptyChoice}</option>
        {employees.map((employee) => (
          <option key={employee.id} value={employee.id}>
            {employee.name}
          </option>
        ))}
      </select>
    </div>
  );
}
