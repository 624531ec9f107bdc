import { zodResolver } from '@hookform/resolvers/zod';
import { useForm } from 'react-hook-form';
import { Button, TextField } from '@/components';
import { type ApplyMessageValues, applyMessageSchema, describeObject, type ObjectChange } from '../types';
import { countChanges } from './PendingChanges';

// The objects named in the step; the rest are counted (Review changes lists them all).
export const LISTED = 5;

type ApplyConfirmStepProps = {
  changes: ObjectChange[]; // the first few
  count: number; // all of them
  busy: boolean;
  onApply: (message: string) => void;
  onCancel: () => void;
};

/**
 * The banner's Apply, one step further: what is about to be published (the changed objects,
 * counted) and a message for the history, then Apply or Cancel.
 */
export function ApplyConfirmStep({ changes, count: total, busy, onApply, onCancel }: ApplyConfirmStepProps) {
  const { register, handleSubmit, formState } = useForm<ApplyMessageValues>({
    resolver: zodResolver(applyMessageSchema),
    defaultValues: { message: '' },
  });
  const count = countChanges(total);
  const more = total - Math.min(changes.length, LISTED);
  return (
    <form className="pending-banner-apply" aria-label={`Apply ${count}`} noValidate onSubmit={handleSubmit((values) => onApply(values.message))}>
      <p>
        This checks the whole configuration (the compiler, then HAProxy itself) and publishes {count} to every node as a new revision:
      </p>
      <ul aria-label="Changes to apply">
        {changes.slice(0, LISTED).map((change) => {
          const { kind, name } = describeObject(change.path);
          return <li key={change.path}>{`${kind} ${name}`.trim()} {change.change}</li>;
        })}
        {more > 0 ? <li>and {countChanges(more)} more</li> : null}
      </ul>
      <TextField label="Message" placeholder="What changed, for the history" autoFocus error={formState.errors.message?.message} {...register('message')} />
      <div className="form-actions">
        <Button type="submit" variant="primary" size="small" busy={busy}>
          Apply {count}
        </Button>
        <Button variant="ghost" size="small" onClick={onCancel}>
          Cancel
        </Button>
      </div>
    </form>
  );
}
