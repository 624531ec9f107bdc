import { useState } from 'react';
import { Button } from './Button';

/** Copies `text` to the clipboard and says so; falls back to selecting it when not allowed. */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState('copied');
    } catch {
      setState('failed');
    }
  };
  return (
    <span className="copy">
      <Button size="small" onClick={copy}>
        {label}
      </Button>
      <span role="status" className="copy-status">
        {state === 'copied' ? 'Copied.' : state === 'failed' ? 'Copy failed: select the text and copy it.' : ''}
      </span>
    </span>
  );
}
