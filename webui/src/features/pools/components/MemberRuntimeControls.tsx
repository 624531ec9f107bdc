import { type FormEvent, useState } from 'react';
import { Alert, Button } from '@/components';
import { errorMessage } from '@/lib/api';
import { weight as weightRule } from '@/lib/validation';
import { useChangeMemberAtRuntime } from '../hooks/usePools';
import { type Member, type MemberRuntimeChange, MEMBER_STATES } from '../types';
import { MemberStateButtons } from './MemberStateButtons';

/**
 * One click to enable, drain or disable a live member, and its weight: changed at once
 * through HAProxy's runtime API (as a revision of its own), without applying other changes.
 */
export function MemberRuntimeControls({ member }: { member: Member }) {
  const runtime = useChangeMemberAtRuntime();
  const stored = member.weight ?? 1;
  const [weight, setWeight] = useState(String(stored));
  const [shownWeight, setShownWeight] = useState(stored);
  const [status, setStatus] = useState<string | null>(null);
  const [invalid, setInvalid] = useState<string | null>(null);
  if (stored !== shownWeight) {
    // The member changed elsewhere (its form, another tab): show its weight now.
    setShownWeight(stored);
    setWeight(String(stored));
  }

  const change = (body: MemberRuntimeChange, done: string) => {
    setStatus(null);
    runtime.mutate({ id: member.id, change: body }, { onSuccess: (result) => setStatus(`${done} (revision ${result.revision}).`) });
  };
  const onWeight = (event: FormEvent) => {
    event.preventDefault();
    const parsed = weightRule.safeParse(weight === '' ? Number.NaN : Number(weight));
    setInvalid(parsed.success ? null : (parsed.error.issues[0]?.message ?? 'Enter the weight.'));
    if (parsed.success) change({ weight: parsed.data }, `Weight of ${member.name} set to ${parsed.data}`);
  };
  const stateLabel = (state: Member['state']) => MEMBER_STATES.find((s) => s.value === state)?.label.toLowerCase() ?? state;

  return (
    <div className="runtime">
      <MemberStateButtons
        memberName={member.name}
        state={member.state ?? 'enabled'}
        busy={runtime.isPending}
        onChange={(state) => change({ state }, `${member.name} ${stateLabel(state)}`)}
      />
      <form className="runtime-weight" onSubmit={onWeight} noValidate>
        <input
          type="number"
          min={0}
          max={256}
          value={weight}
          onChange={(event) => setWeight(event.target.value)}
          aria-label={`Live weight of ${member.name}`}
          aria-invalid={invalid ? true : undefined}
          aria-describedby={invalid ? `weight-error-${member.id}` : undefined}
        />
        <Button size="small" type="submit" busy={runtime.isPending} aria-label={`Set live weight of ${member.name}`}>
          Set weight
        </Button>
      </form>
      {invalid ? (
        <p id={`weight-error-${member.id}`} className="field-error runtime-status">
          {invalid}
        </p>
      ) : null}
      <span role="status" className="runtime-status">
        {status}
      </span>
      {runtime.isError ? <Alert tone="error">{errorMessage(runtime.error)}</Alert> : null}
    </div>
  );
}
