// Each view's document title ("Tasks — Task portal"), named on every change of view (WCAG 2.4.2).
import { useLayoutEffect } from 'preact/hooks';

/** The portal's name: the top bar's brand and the end of every title (web/index.html holds a copy, kept by a test). */
export const PORTAL_NAME = 'Task portal';

/** "Sign in" → "Sign in — Task portal"; no view (still loading) → the portal's name alone. */
export function pageTitle(view: string | null): string {
  return view === null ? PORTAL_NAME : `${view} — ${PORTAL_NAME}`;
}

/** Sets the document's title while the calling view is shown, with the render that shows it. */
export function useDocumentTitle(view: string | null): void {
  useLayoutEffect(() => {
    document.title = pageTitle(view);
  }, [view]);
}
