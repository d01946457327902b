import { useEffect, useState } from 'react';

/** A status line that screen readers hear and that clears itself, so an old message never reads as news. */
export function useAnnouncement(ms = 12_000): [string, (message: string) => void] {
  const [message, setMessage] = useState('');
  useEffect(() => {
    if (!message) return;
    const timer = setTimeout(() => setMessage(''), ms);
    return () => clearTimeout(timer);
  }, [message, ms]);
  return [message, setMessage];
}
