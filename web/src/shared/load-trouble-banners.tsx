// The banners of a page's failed loads: the pause with its countdown, and the error with its "Try again".
import type { LoadTroubleHandle } from './use-load-trouble.ts';
import { duration } from './wording.ts';

interface Props {
  readonly trouble: Pick<LoadTroubleHandle, 'pause' | 'pauseLeft' | 'error'>;
  /** What loads again once the pause ends, as the sentence starts: "The tasks", "The lists". */
  readonly what: string;
  /** Loads again what failed, for the error banner's button. */
  readonly onRetry: () => void;
}

export function LoadTroubleBanners({ trouble, what, onRetry }: Props) {
  return (
    <>
      {trouble.pause && (
        <div class="banner warning" role="alert">
          <p>{trouble.pause.text}</p>
          <p role="timer">
            {what} will load again in {duration(trouble.pauseLeft)}.
          </p>
        </div>
      )}
      {trouble.error && (
        <div class="banner error" role="alert">
          <p>{trouble.error}</p>
          <button type="button" onClick={onRetry}>
            Try again
          </button>
        </div>
      )}
    </>
  );
}
