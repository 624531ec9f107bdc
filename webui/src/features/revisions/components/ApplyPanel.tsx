import { zodResolver } from '@hookform/resolvers/zod';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { Alert, Button, Panel, TextField } from '@/components';
import { errorMessage } from '@/lib/api';
import { publishProblems } from '../api/revisionsApi';
import { useApply } from '../hooks/useRevisions';
import { type ApplyFormValues, applyFormSchema } from '../types';
import { ApplyProblems } from './ApplyProblems';
import { ApplyResult } from './ApplyResult';

/** Apply: freeze the current objects into a revision, publish it, and follow the nodes. */
export function ApplyPanel() {
  const apply = useApply();
  const [revisionId, setRevisionId] = useState<number>();
  const { register, handleSubmit, reset, formState } = useForm<ApplyFormValues>({
    resolver: zodResolver(applyFormSchema),
    defaultValues: { message: '' },
  });
  const submit = handleSubmit(async ({ message }) => {
    setRevisionId(undefined);
    try {
      const revision = await apply.mutateAsync(message);
      setRevisionId(revision.id);
      reset({ message: '' });
    } catch {
      // shown below from apply.error
    }
  });
  const problems = apply.isError ? publishProblems(apply.error) : null;
  return (
    <Panel title="Apply changes">
      <p className="muted">
        Applying checks the whole configuration (the compiler, then HAProxy itself) and publishes it as a new revision to every node.
      </p>
      <form onSubmit={submit} noValidate className="form form-apply">
        <TextField label="Message" placeholder="What changed, for the history" error={formState.errors.message?.message} {...register('message')} />
        <Button type="submit" variant="primary" busy={formState.isSubmitting}>
          Apply
        </Button>
      </form>
      {problems ? <ApplyProblems error={problems} /> : null}
      {apply.isError && !problems ? <Alert tone="error" title="Not applied">{errorMessage(apply.error)}</Alert> : null}
      {revisionId !== undefined ? <ApplyResult revisionId={revisionId} /> : null}
    </Panel>
  );
}
