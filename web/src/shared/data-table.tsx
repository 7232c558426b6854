// A table of records (locks, events, people, clients): its column heads; on a narrow screen each row becomes
// a card.
import type { ComponentChildren } from 'preact';

interface Props {
  readonly id: string;
  /** The id of the heading that names the table. */
  readonly labelledBy: string;
  readonly busy: boolean;
  readonly columns: readonly string[];
  /** The name of a last column holding the rows' buttons, read out but not shown. */
  readonly actions?: string;
  /** A class beside `data`. */
  readonly class?: string;
  readonly children: ComponentChildren;
}

export function DataTable({ id, labelledBy, busy, columns, actions, class: extra, children }: Props) {
  return (
    <table class={extra ? `data ${extra}` : 'data'} id={id} aria-labelledby={labelledBy} aria-busy={busy}>
      <thead>
        <tr>
          {columns.map((column) => (
            <th scope="col" key={column}>
              {column}
            </th>
          ))}
          {actions && (
            <th scope="col">
              <span class="visually-hidden">{actions}</span>
            </th>
          )}
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  );
}
