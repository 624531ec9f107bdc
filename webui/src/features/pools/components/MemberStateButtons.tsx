import { Button } from '@/components';
import { MEMBER_STATES, type MemberState } from '../types';

type MemberStateButtonsProps = {
  memberName: string;
  state: MemberState;
  busy?: boolean;
  onChange: (state: MemberState) => void;
};

/** One click to enable, drain or disable a member; the current state is the pressed button. */
export function MemberStateButtons({ memberName, state, busy, onChange }: MemberStateButtonsProps) {
  return (
    <div className="segmented" role="group" aria-label={`State of ${memberName}`}>
      {MEMBER_STATES.map((option) => (
        <Button
          key={option.value}
          size="small"
          variant="ghost"
          className={`segment segment-${option.value}`}
          aria-pressed={state === option.value}
          disabled={busy}
          onClick={() => state !== option.value && onChange(option.value)}
        >
          {option.action}
        </Button>
      ))}
    </div>
  );
}
