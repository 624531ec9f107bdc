import { useEffect, useState } from 'react';

/** Whole seconds left until `deadline` (an ISO time; null: none), updated every second, never below 0. */
export function useCountdown(deadline: string | null | undefined): number | null {
  const at = deadline ? new Date(deadline).getTime() : Number.NaN;
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (Number.isNaN(at)) return undefined;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [at]);
  if (Number.isNaN(at)) return null;
  return Math.max(0, Math.ceil((at - now) / 1000));
}

/** `m:ss` for a countdown. */
export function formatCountdown(seconds: number): string {
  const minutes = Math.floor(seconds / 60);
  return `${minutes}:${String(seconds % 60).padStart(2, '0')}`;
}

/**
 * What a screen reader hears about a countdown: it changes once a minute, then every second
 * of the last ten, so a polite live region is not read out every second.
 */
export function countdownAnnouncement(seconds: number): string {
  if (seconds <= 0) return 'Time is up.';
  if (seconds <= 10) return `${seconds} second${seconds === 1 ? '' : 's'} left.`;
  if (seconds <= 60) return 'Less than a minute left.';
  return `Less than ${Math.ceil(seconds / 60)} minutes left.`;
}
