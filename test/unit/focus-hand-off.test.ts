// Where dropped focus goes (web/src/shared/focus-hand-off.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canTakeFocus, focusDropped, handOffTarget } from '../../web/src/shared/focus-hand-off.ts';

/** Just enough of an element for the rules: attributes, whether it is in the document, enabled, rendered. */
function element(
  id: string,
  { connected = true, disabled = false, rendered = true, attributes = {} as Record<string, string> } = {},
) {
  return {
    id,
    isConnected: connected,
    disabled,
    getAttribute: (name: string) => attributes[name] ?? null,
    getClientRects: () => ({ length: rendered ? 1 : 0 }),
  } as unknown as HTMLElement & { disabled: boolean };
}

describe('focus hand-off', () => {
  const heading = element('tasks-title');

  it('takes the first successor that can hold focus', () => {
    const previous = element('previous-page', { disabled: true });
    const results = element('results-title');
    const lost = element('next-page', {
      disabled: true,
      attributes: { 'data-hand-off': 'previous-page results-title' },
    });
    const byId = (id: string) => ({ 'previous-page': previous, 'results-title': results })[id] ?? null;
    assert.equal(handOffTarget(lost, byId, heading), results);
  });

  it("falls back to the page's heading when no successor is named or usable", () => {
    const hidden = element('unlock-status', { rendered: false });
    const lost = element('unlock', {
      connected: false,
      attributes: { 'data-hand-off': 'unlock-status gone' },
    });
    assert.equal(
      handOffTarget(lost, (id) => (id === 'unlock-status' ? hidden : null), heading),
      heading,
    );
    assert.equal(
      handOffTarget(element('plain'), () => null, null),
      null,
    );
  });

  it('counts focus as dropped only when nothing took it and the control was disabled or removed', () => {
    assert.equal(focusDropped(element('a', { disabled: true }), null), true);
    assert.equal(focusDropped(element('a', { connected: false }), null), true);
    assert.equal(focusDropped(element('a'), null), false, 'a click on the page, or the window left');
    assert.equal(focusDropped(element('a', { disabled: true }), element('b')), false, 'Tab moved it');
  });

  it('knows what can take focus', () => {
    assert.equal(canTakeFocus(null), false);
    assert.equal(canTakeFocus(element('a', { attributes: { 'aria-hidden': 'true' } })), false);
    assert.equal(canTakeFocus(element('a')), true);
  });
});
