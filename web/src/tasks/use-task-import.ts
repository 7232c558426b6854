// Importing a CSV file of tasks (docs/rules.md#export-and-import): its upload's progress, then created, wrong
// rows or a refusal.
import { useRef, useState } from 'preact/hooks';
import {
  type ApiClient,
  type ImportRowError,
  isApiError,
  newIdempotencyKey,
} from '../../../src/client/index.ts';
import { describeImportError, IMPORT_FATE_UNKNOWN } from './task-wording.ts';
import { uploadFetch } from './upload-fetch.ts';

export type ImportState =
  | { readonly kind: 'idle' }
  /** On its way: `sent` of `total` bytes; the server checks and creates once all have gone. */
  | { readonly kind: 'sending'; readonly file: string; readonly sent: number; readonly total: number }
  | { readonly kind: 'created'; readonly file: string; readonly created: number }
  /** 422 IMPORT_INVALID: nothing was created; each wrong cell by line and column. */
  | { readonly kind: 'invalid'; readonly file: string; readonly errors: readonly ImportRowError[] }
  | { readonly kind: 'refused'; readonly text: string };

/** Answers after which the import may or may not have been made: sent again, it goes under the same key. */
const FATE_UNKNOWN = ['NETWORK_ERROR', 'SERVICE_UNAVAILABLE', 'GATEWAY_TIMEOUT', 'UNEXPECTED_RESPONSE'];

/** `onImported` runs after tasks were created (the list reloads); `onSignedOut` when the session is gone. */
export function useTaskImport(
  client: ApiClient,
  onImported: () => void,
  onSignedOut: (notice: string) => void,
) {
  const [state, setState] = useState<ImportState>({ kind: 'idle' });
  // The key of the last import whose answer never came, kept with its file: the same file sent
  // again goes under the same key, so that the server creates its tasks once.
  const pending = useRef<{ key: string; text: string } | null>(null);
  const sending = state.kind === 'sending';

  const start = async (file: File) => {
    if (sending) return;
    const name = file.name;
    setState({ kind: 'sending', file: name, sent: 0, total: file.size });
    let text: string;
    try {
      text = await file.text();
    } catch {
      // Chromium refuses to read a file changed on disk since it was chosen.
      setState({
        kind: 'refused',
        text: `${name} could not be read (it may have changed since you chose it). Choose the file again.`,
      });
      return;
    }
    const key = pending.current?.text === text ? pending.current.key : newIdempotencyKey();
    pending.current = { key, text };
    try {
      const { created } = await client.importTasks(text, {
        idempotencyKey: key,
        fetch: uploadFetch((sent, total) => setState({ kind: 'sending', file: name, sent, total })),
      });
      pending.current = null;
      setState({ kind: 'created', file: name, created });
      onImported();
    } catch (error) {
      if (isApiError(error, 'UNAUTHENTICATED')) return onSignedOut('Your session has ended. Sign in again.');
      const unknownFate = isApiError(error, ...FATE_UNKNOWN);
      if (!unknownFate && !isApiError(error, 'IDEMPOTENCY_KEY_IN_FLIGHT')) pending.current = null;
      if (isApiError(error, 'IMPORT_INVALID'))
        setState({
          kind: 'invalid',
          file: name,
          errors: Array.isArray(error.body.errors) ? (error.body.errors as ImportRowError[]) : [],
        });
      else
        setState({ kind: 'refused', text: unknownFate ? IMPORT_FATE_UNKNOWN : describeImportError(error) });
    }
  };

  return { state, sending, start };
}
