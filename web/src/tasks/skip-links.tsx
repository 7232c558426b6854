// Skip links: past the filters and the task checkboxes, straight to a part of the page; hidden until focused.

export interface SkipLink {
  /** The id of the element to move focus to; it takes focus (a control, or tabindex=-1). */
  readonly target: string;
  readonly label: string;
}

export function SkipLinks({ links }: { links: readonly SkipLink[] }) {
  // The hash is the portal's view (#tasks, #admin): focus moves by script, the URL stays.
  const skip = (event: MouseEvent, target: string) => {
    event.preventDefault();
    document.getElementById(target)?.focus();
  };
  return (
    <ul class="skip-links">
      {links.map((link) => (
        <li key={link.target}>
          <a href={`#${link.target}`} onClick={(event) => skip(event, link.target)}>
            {link.label}
          </a>
        </li>
      ))}
    </ul>
  );
}
