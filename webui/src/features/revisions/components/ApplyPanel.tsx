import { zodResolver } from '@hookform/resolvers/zod';
import { useState } from 'react';
import { useForm, useWatch } from 'react-hook-form';
import { Alert, Button, CheckboxField, Panel, SelectField, TextField } from '@/components';
import { errorMessage } from '@/lib/api';
import { nothingToApply, publishProblems } from '../api/revisionsApi';
import { useApply } from '../hooks/useRevisions';
import { type ApplyFormValues, applyFormSchema, CONFIRM_MAX_S, CONFIRM_MIN_S, CONFIRM_WINDOWS, confirmWithin, sameAsRevision } from '../types';
import { ApplyProblems } from './ApplyProblems';
import { ApplyResult } from './ApplyResult';

const DEFAULTS: ApplyFormValues = { message: '', withConfirm: false, window: '300', seconds: '' };

/**
 * Apply: freeze the current objects into a revision, publish it, and follow the nodes. "With
 * confirm" publishes a revision that rolls back by itself unless confirmed in time (shown
 * by the confirm panel). With nothing pending the API publishes nothing; "Publish again"
 * then sends the same configuration to the nodes anew (force).
 */
export function ApplyPanel() {
  const apply = useApply();
  const [revisionId, setRevisionId] = useState<number>();
  const { register, handleSubmit, reset, control, formState } = useForm<ApplyFormValues>({
    resolver: zodResolver(applyFormSchema),
    defaultValues: DEFAULTS,
  });
  const [withConfirm, confirmWindow] = useWatch({ control, name: ['withConfirm', 'window'] });
  const publish = (force: boolean) =>
    handleSubmit(async (values) => {
      setRevisionId(undefined);
      try {
        const revision = await apply.mutateAsync({ message: values.message, confirmWithinS: confirmWithin(values), force });
        setRevisionId(revision.id);
        reset(DEFAULTS);
      } catch {
        // shown below from apply.error
      }
    });
  const submit = publish(false);
  const problems = apply.isError ? publishProblems(apply.error) : null;
  const nothing = apply.isError ? nothingToApply(apply.error) : null;
  return (
    <Panel title="Apply changes">
      <p className="muted">
        Applying checks the whole configuration (the compiler, then HAProxy itself) and publishes it as a new revision to every node.
      </p>
      <form onSubmit={submit} noValidate className="form" aria-label="Apply changes">
        <TextField label="Message" placeholder="What changed, for the history" error={formState.errors.message?.message} {...register('message')} />
        <CheckboxField
          label="Apply with confirm"
          hint="Rolls back by itself unless you confirm in time: a safety net for changes that could cut you off."
          {...register('withConfirm')}
        />
        {withConfirm ? (
          <div className="form-row">
            <SelectField label="Confirm within" options={CONFIRM_WINDOWS} className="field-narrow" {...register('window')} />
            {confirmWindow === 'custom' ? (
              <TextField
                label="Seconds"
                inputMode="numeric"
                className="field-narrow"
                hint={`${CONFIRM_MIN_S} to ${CONFIRM_MAX_S}`}
                error={formState.errors.seconds?.message}
                {...register('seconds')}
              />
            ) : null}
          </div>
        ) : null}
        <div className="form-actions">
          <Button type="submit" variant="primary" busy={formState.isSubmitting}>
            {withConfirm ? 'Apply with confirm' : 'Apply'}
          </Button>
        </div>
      </form>
      {problems ? <ApplyProblems error={problems} /> : null}
      {nothing ? (
        <Alert tone="info" title="Nothing to apply">
          <p>{sameAsRevision(nothing.base_revision)} No revision was published.</p>
          <Button size="small" busy={apply.isPending} onClick={publish(true)}>
            Publish the same configuration again
          </Button>
        </Alert>
      ) : null}
      {apply.isError && !problems && !nothing ? (
        <Alert tone="error" title="Not applied">
          {errorMessage(apply.error)}
        </Alert>
      ) : null}
      {revisionId !== undefined ? <ApplyResult revisionId={revisionId} /> : null}
    </Panel>
  );
}
