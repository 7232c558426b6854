// Focus is never dropped: a control disabled or removed while focused hands it on.
import type { RefObject } from 'preact';
import { useLayoutEffect } from 'preact/hooks';

/**
 * The attribute a control names its successors with, most wanted first:
 * `data-hand-off="previous-page results-title"` (element ids).
 */
export const HAND_OFF_ATTRIBUTE = 'data-hand-off';

type Focusable = HTMLElement & { disabled?: boolean };

/** Whether `element` can hold focus now: in the document, enabled and rendered. */
export function canTakeFocus(element: Focusable | null): element is Focusable {
  return (
    !!element?.isConnected &&
    element.disabled !== true &&
    element.getAttribute('aria-hidden') !== 'true' &&
    element.getClientRects().length > 0
  );
}

/** Whether the focus that `lost` gave up was dropped (it was disabled or removed), not moved by the person. */
export function focusDropped(lost: Focusable, moved: EventTarget | null): boolean {
  return moved === null && (lost.disabled === true || !lost.isConnected);
}

/** The first of the ids `lost` names that can take focus, else `fallback` when it can. */
export function handOffTarget(
  lost: Element,
  byId: (id: string) => Focusable | null,
  fallback: Focusable | null,
): Focusable | null {
  const ids = lost.getAttribute(HAND_OFF_ATTRIBUTE)?.split(/\s+/).filter(Boolean) ?? [];
  for (const id of ids) {
    const element = byId(id);
    if (canTakeFocus(element)) return element;
  }
  return canTakeFocus(fallback) ? fallback : null;
}

/**
 * Within `container`, a control that loses focus because it was disabled or removed (Chromium moves
 * focus to the body then, and the next Tab starts over) hands it to the first usable element its
 * `data-hand-off` names, else to `fallback` (the page's heading).
 */
export function useFocusHandOff(
  container: RefObject<HTMLElement | null>,
  fallback: RefObject<HTMLElement | null>,
): void {
  useLayoutEffect(() => {
    const root = container.current;
    if (!root) return;
    const handOff = (event: FocusEvent) => {
      const lost = event.target as Focusable;
      if (lost === root) return;
      // Decided once the render that disabled or removed the control has finished.
      queueMicrotask(() => {
        const active = document.activeElement;
        if (active !== null && active !== document.body) return;
        if (!focusDropped(lost, event.relatedTarget)) return;
        handOffTarget(lost, (id) => document.getElementById(id), fallback.current)?.focus();
      });
    };
    root.addEventListener('focusout', handOff);
    return () => root.removeEventListener('focusout', handOff);
  }, [container, fallback]);
}

/**
 * Moves focus to `target` when the view appears, in the same task as the render that shows it (a
 * layout effect): no moment when the view is on screen and focus is still on the body.
 */
export function useFocusOnShow(target: RefObject<HTMLElement | null>): void {
  useLayoutEffect(() => target.current?.focus(), [target]);
}

/**
 * A button that is busy but keeps focus: marked aria-disabled instead of disabled (which would drop
 * focus), its action ignored meanwhile.
 */
export function whileBusy(busy: boolean, action: () => void) {
  return {
    'aria-disabled': busy ? ('true' as const) : undefined,
    onClick: () => {
      if (!busy) action();
    },
  };
}
