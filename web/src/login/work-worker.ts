// The Web Worker that solves a sign-in's challenge (docs/rules.md#proved-work) off the page's thread.
import { searchNonce, type WorkAsked, type WorkFound } from '../../../src/client/index.ts';

/** The worker's side of the messages: one challenge in, one solution out (then the page ends the worker). */
const scope = self as unknown as {
  onmessage: ((event: MessageEvent<WorkAsked>) => void) | null;
  postMessage(message: WorkFound): void;
};

scope.onmessage = ({ data }) => {
  // One tight loop: nothing else runs on this thread, and the page ends the worker to stop it.
  const { found, next } = searchNonce(data, 0, Number.MAX_SAFE_INTEGER);
  scope.postMessage({ nonce: found!, hashes: next });
};
