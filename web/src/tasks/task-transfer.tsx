// Export and import on the Tasks page: the list's every page as a CSV file, and a CSV file in, with its
// upload's progress.
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { fieldErrorProps } from '../shared/field-error.ts';
import { importedSentence, importRowWords } from './task-wording.ts';
import type { ImportState } from './use-task-import.ts';

interface Props {
  /** The export of the applied search, filters and sort: a download the browser makes itself. */
  readonly exportUrl: string;
  readonly state: ImportState;
  readonly onImport: (file: File) => void;
}

export function TaskTransfer({ exportUrl, state, onImport }: Props) {
  const [noFile, setNoFile] = useState(false);
  const fileInput = useRef<HTMLInputElement>(null);
  const problems = useRef<HTMLDivElement>(null);
  const sending = state.kind === 'sending';
  const invalid = state.kind === 'invalid' || state.kind === 'refused';

  // A refusal takes focus, so that the rows to fix are read first; a missing file sends it to the picker.
  useLayoutEffect(() => {
    if (invalid) problems.current?.focus();
  }, [state, invalid]);
  useLayoutEffect(() => {
    if (noFile) fileInput.current?.focus();
  }, [noFile]);

  const submit = (event: Event) => {
    event.preventDefault();
    if (sending) return;
    const file = fileInput.current?.files?.[0];
    if (!file) return setNoFile(true);
    onImport(file);
  };

  return (
    <section class="transfer" aria-labelledby="transfer-title">
      <h2 id="transfer-title">Export and import</h2>
      <p class="export">
        <a id="export-csv" class="button-link" href={exportUrl} download aria-describedby="export-hint">
          Export CSV
        </a>
        <span id="export-hint" class="hint">
          Every task the applied search and filters find, on every page, in their sort.
        </span>
      </p>
      <form class="import-form" onSubmit={submit} aria-label="Import tasks">
        <div class="field import-file">
          <label for="import-file">CSV file to import</label>
          <input
            id="import-file"
            type="file"
            accept=".csv,text/csv"
            ref={fileInput}
            onChange={() => setNoFile(false)}
            {...fieldErrorProps(
              noFile || invalid,
              'import-hint',
              noFile && 'import-file-problem',
              invalid && 'import-problems',
            )}
          />
          {noFile && (
            <p id="import-file-problem" class="error">
              Choose a CSV file first.
            </p>
          )}
        </div>
        <button type="submit" aria-disabled={sending ? 'true' : undefined}>
          {sending ? 'Importing…' : 'Import CSV'}
        </button>
      </form>
      <p id="import-hint" class="hint">
        A header row names the columns: client and title, and any of description, status, priority, dueDate
        and assignee. Every row is created, or none.
      </p>
      {state.kind === 'sending' && (
        <div class="import-progress">
          <label for="import-progress">Sending {state.file}</label>
          <progress id="import-progress" max={state.total} value={state.sent}>
            {percent(state.sent, state.total)}
          </progress>
          <span aria-hidden="true">
            {state.sent < state.total ? percent(state.sent, state.total) : 'Sent; creating the tasks…'}
          </span>
        </div>
      )}
      <div id="import-status" role="status">
        {state.kind === 'sending' && <p>Importing {state.file}…</p>}
        {state.kind === 'created' && <p>{importedSentence(state.created, state.file)}</p>}
      </div>
      <div id="import-problems" role="alert" tabIndex={-1} ref={problems}>
        {state.kind === 'refused' && <p class="error">{state.text}</p>}
        {state.kind === 'invalid' && <RowProblems file={state.file} errors={state.errors} />}
      </div>
    </section>
  );
}

const percent = (sent: number, total: number) => `${total === 0 ? 100 : Math.floor((sent / total) * 100)}%`;

function RowProblems({ file, errors }: Pick<Extract<ImportState, { kind: 'invalid' }>, 'file' | 'errors'>) {
  return (
    <>
      <p class="error">
        Nothing was imported: {file} has {errors.length === 1 ? 'a wrong cell' : 'wrong cells'}. Fix{' '}
        {errors.length === 1 ? 'it' : 'them'} and import the file again.
      </p>
      <ul class="failures" id="import-rows">
        {errors.map((error, position) => (
          <li key={position}>{importRowWords(error)}</li>
        ))}
      </ul>
    </>
  );
}
