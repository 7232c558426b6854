// Whole seconds left until a deadline, re-rendering as they tick down; 0 once it has passed.
import { useEffect, useState } from 'preact/hooks';

const secondsLeft = (until: number | null) =>
  until === null ? 0 : Math.max(0, Math.ceil((until - Date.now()) / 1000));

/** `until` is a Date.now()-style time, or null for no countdown. */
export function useCountdown(until: number | null): number {
  // The state only makes the component render again when the whole second changes.
  const [, setShown] = useState(0);
  useEffect(() => {
    if (until === null) return;
    // Checks a few times a second so the display turns over close to each whole second.
    const timer = setInterval(() => {
      const left = secondsLeft(until);
      setShown(left);
      if (left === 0) clearInterval(timer);
    }, 250);
    return () => clearInterval(timer);
  }, [until]);
  return secondsLeft(until);
}
