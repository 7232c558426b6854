// The sign-in's proved work (docs/rules.md#proved-work): solved in a Web Worker, said politely.
import { useEffect, useRef, useState } from 'preact/hooks';
import { solveInSlices, type WorkAsked, type WorkFound, type WorkSolver } from '../../../src/client/index.ts';

export interface ProvedWork {
  /** What is being solved now (the effort grows after each further LOGIN_BUSY), or null. */
  readonly solving: WorkAsked | null;
  /** How many challenges this sign-in has solved or is solving (1 on the first). */
  readonly rounds: number;
  /** For client.login: the worker's solver, and the hook that shows the work. */
  readonly solveWork: WorkSolver;
  readonly onWork: (asked: WorkAsked) => void;
  /** The sign-in is over (signed in or refused otherwise): the status line empties. */
  done(): void;
}

/** Solves in a worker of its own, ended once it answers or the sign-in is abandoned. */
function solveInWorker(asked: WorkAsked, signal?: AbortSignal): Promise<WorkFound> {
  let worker: Worker;
  try {
    worker = new Worker(new URL('./work-worker.ts', import.meta.url), { type: 'module' });
  } catch {
    return solveInSlices(asked, signal); // no workers here: slices on the page's thread
  }
  return new Promise<WorkFound>((resolve, reject) => {
    const end = () => worker.terminate();
    signal?.addEventListener('abort', () => {
      end();
      reject(signal.reason);
    });
    worker.onmessage = (event: MessageEvent<WorkFound>) => {
      end();
      resolve(event.data);
    };
    worker.onerror = () => {
      end();
      resolve(solveInSlices(asked, signal));
    };
    worker.postMessage(asked);
  });
}

export function useProvedWork(): ProvedWork {
  const [solving, setSolving] = useState<WorkAsked | null>(null);
  const [rounds, setRounds] = useState(0);
  // A page left mid-solve ends its worker.
  const abort = useRef(new AbortController());
  useEffect(() => () => abort.current.abort(), []);
  return {
    solving,
    rounds,
    solveWork: (asked) => solveInWorker(asked, abort.current.signal),
    onWork: (asked) => {
      setSolving(asked);
      setRounds((n) => n + 1);
    },
    done: () => {
      setSolving(null);
      setRounds(0);
    },
  };
}
