import { Badge, type BadgeTone } from '@/components';
import type { ConfirmState } from '../types';

const CONFIRM: Record<Exclude<ConfirmState, 'none'>, { tone: BadgeTone; text: string }> = {
  awaiting: { tone: 'warning', text: 'awaiting confirmation' },
  confirmed: { tone: 'success', text: 'confirmed' },
  'rolled-back': { tone: 'neutral', text: 'rolled back' },
  'rollback-failed': { tone: 'danger', text: 'rollback failed' },
};

/** Apply with confirm: where the revision stands; nothing when it was applied without. */
export function ConfirmStateBadge({ state }: { state: ConfirmState }) {
  if (state === 'none') return null;
  const { tone, text } = CONFIRM[state];
  return <Badge tone={tone}>{text}</Badge>;
}
