// A page's outer section and its heading, which names the document and takes focus when the page shows.
import type { ComponentChildren } from 'preact';
import { useRef } from 'preact/hooks';
import type { ApiClient, User } from '../../../src/client/index.ts';
import { useFocusHandOff, useFocusOnShow } from './focus-hand-off.ts';
import { useDocumentTitle } from './page-title.ts';

/** What each page of a signed-in person is given. */
export interface PageProps {
  readonly client: ApiClient;
  readonly user: User;
  /** The session is gone: back to the Login page with this notice. */
  readonly onSignedOut: (notice: string) => void;
}

interface Props {
  /** The heading is `${id}-title`, and it labels the section. */
  readonly id: string;
  readonly title: string;
  readonly class?: string;
  readonly children: ComponentChildren;
}

/** A control disabled or removed while focused anywhere on the page hands focus on, else to the heading. */
export function Page({ id, title, class: className, children }: Props) {
  const heading = useRef<HTMLHeadingElement>(null);
  const section = useRef<HTMLElement>(null);
  useFocusOnShow(heading);
  useFocusHandOff(section, heading);
  useDocumentTitle(title);
  return (
    <section class={className} aria-labelledby={`${id}-title`} ref={section}>
      <h1 id={`${id}-title`} tabIndex={-1} ref={heading}>
        {title}
      </h1>
      {children}
    </section>
  );
}
