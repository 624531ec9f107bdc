import { zodResolver } from '@hookform/resolvers/zod';
import { type FormEvent, useEffect, useRef, useState } from 'react';
import { type Path, type Resolver, useForm, type UseFormReturn, useWatch } from 'react-hook-form';
import { useNavigate } from 'react-router-dom';
import { Alert, Button, ButtonLink, FormActions } from '@/components';
import { errorMessage } from '@/lib/api';
import { showServerErrors } from '@/lib/forms';
import { checkListener, WizardCreateError } from '../api/wizardApi';
import { useCreateServiceFromWizard } from '../hooks/useServiceWizard';
import {
  type CertificateChoice,
  emptyMember,
  emptyWizard,
  type PoolChoice,
  STEP_FIELDS,
  STEP_TITLES,
  stepOfField,
  translateWizardPath,
  type WizardStage,
  type WizardStep,
  type WizardValues,
  wizardFormFields,
  wizardSchema,
  wizardSteps,
} from '../types';
import { CertificateStep, presentable } from './WizardCertificateStep';
import { KindStep } from './WizardKindStep';
import { ListenerStep } from './WizardListenerStep';
import { PoolStep } from './WizardPoolStep';
import { ReviewStep } from './WizardReviewStep';

type WizardProps = { pools: readonly PoolChoice[]; certificates: readonly CertificateChoice[] };

const REFUSED: Record<WizardStage['call'], string> = {
  certificate: 'The API refused the certificate',
  pool: 'The API refused the pool',
  check: 'The API refused the health check',
  member: 'The API refused a member',
  service: 'The API refused the virtual service',
};

/** The problem to show above a step after a refused attempt, saying what was cleaned up. */
function describeFailure(err: WizardCreateError, leftover: string | null, values: WizardValues): string {
  const member = err.stage.call === 'member' ? ` (${values.members[err.stage.index]?.name.trim() ?? ''})` : '';
  const what = `${REFUSED[err.stage.call]}${member}: ${leftover ?? 'see the field marked below'}.`;
  const removed = err.removed.length ? ` Nothing is left half-made: this attempt's ${err.removed.join(' and ')} ${err.removed.length > 1 ? 'were' : 'was'} removed.` : '';
  const left = err.leftBehind.length ? ` Could not remove ${err.leftBehind.join('; ')}: delete it before trying again.` : '';
  return `${what}${removed}${left} Correct it and create again.`;
}

/**
 * A resolver that reports the schema's messages for the fields of the steps reached so far
 * only (`checkUpTo` moves the limit), so each Next — a submit — validates its own step.
 */
function stepResolver() {
  const all = zodResolver(wizardSchema) as unknown as Resolver<WizardValues>;
  let checked: ReadonlySet<string> = new Set(STEP_FIELDS.kind);
  const resolver: Resolver<WizardValues> = async (values, context, options) => {
    const result = await all(values, context, options);
    const errors = Object.fromEntries(Object.entries(result.errors).filter(([field]) => checked.has(field)));
    return Object.keys(errors).length ? { values: {}, errors } : { values, errors: {} };
  };
  const checkUpTo = (steps: readonly WizardStep[]) => {
    checked = new Set(steps.flatMap((step) => STEP_FIELDS[step]));
  };
  return { resolver, checkUpTo };
}

/** Fills what a step starts from when it is first reached: a member row, the pool's and certificate's names. */
function prepareStep(form: UseFormReturn<WizardValues>, step: WizardStep) {
  const values = form.getValues();
  if (step === 'pool' && values.pool_mode === 'new') {
    if (!values.pool_name) form.setValue('pool_name', values.name.trim());
    if (values.members.length === 0) form.setValue('members', [emptyMember(values, 0)]);
  }
  if (step === 'certificate' && values.certificate_mode === 'generate' && !values.cert_name) {
    form.setValue('cert_name', values.name.trim());
  }
}

function StepList({ steps, current }: { steps: WizardStep[]; current: number }) {
  return (
    <ol className="wizard-steps" aria-label="Steps">
      {steps.map((step, index) => (
        <li key={step} aria-current={index === current ? 'step' : undefined} className={index < current ? 'done' : undefined}>
          <span className="wizard-step-number" aria-hidden="true">
            {index + 1}
          </span>
          {STEP_TITLES[step]}
          {index < current ? <span className="visually-hidden"> (done)</span> : null}
        </li>
      ))}
    </ol>
  );
}

/**
 * The guided new-service form: kind, listener, pool, certificate (HTTPS), review. One form
 * holds every step, so Back keeps what was typed; Next checks the step's fields; Create makes
 * the objects in order and, when the API refuses one, shows its message on the step that
 * holds the field after removing what the attempt had made.
 */
export function ServiceWizard({ pools, certificates }: WizardProps) {
  const navigate = useNavigate();
  const create = useCreateServiceFromWizard();
  // Only the steps reached so far are checked: each Next (a submit) validates its own step
  // and, once tried, re-validates its fields as they change.
  const [validation] = useState(stepResolver);
  const form = useForm<WizardValues>({
    resolver: validation.resolver,
    defaultValues: emptyWizard(presentable(certificates).length),
    reValidateMode: 'onChange',
  });
  const kind = useWatch({ control: form.control, name: 'kind' });
  const steps = wizardSteps(kind);
  const [index, setIndex] = useState(0);
  const step = steps[Math.min(index, steps.length - 1)]!;
  const [problem, setProblem] = useState<string | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  const focusField = useRef<string | null>(null);
  const moved = useRef(false);

  useEffect(() => {
    if (!moved.current) return;
    if (focusField.current) form.setFocus(focusField.current as Path<WizardValues>);
    else heading.current?.focus();
    focusField.current = null;
  }, [index, form]);

  const goTo = (next: number) => {
    moved.current = true;
    validation.checkUpTo(steps.slice(0, next + 1));
    prepareStep(form, steps[next]!);
    // A new step starts untried: its fields are not checked while typed until Next.
    form.reset(undefined, { keepValues: true, keepDefaultValues: true, keepErrors: true, keepTouched: true, keepDirty: true });
    setIndex(next);
  };

  const [checking, setChecking] = useState(false);
  const advance = async (values: WizardValues) => {
    setProblem(null);
    if (step === 'listener') {
      // A name or listener taken is said here, not after Create has made the pool.
      setChecking(true);
      try {
        await checkListener(values);
      } catch (err) {
        const leftover = showServerErrors(err, form.setError, STEP_FIELDS.listener as Path<WizardValues>[]);
        if (leftover) setProblem(leftover);
        return;
      } finally {
        setChecking(false);
      }
    }
    goTo(index + 1);
  };

  const onFailure = (err: unknown, values: WizardValues) => {
    if (!(err instanceof WizardCreateError)) {
      setProblem(errorMessage(err));
      return;
    }
    const landed: string[] = [];
    const leftover = showServerErrors(err.refusal, form.setError, wizardFormFields(values) as Path<WizardValues>[], (path) => {
      const translated = translateWizardPath(err.stage, path, values);
      landed.push(translated.join('.'));
      return translated;
    });
    setProblem(describeFailure(err, leftover, values));
    const field = landed.find((path) => stepOfField(path) && steps.includes(stepOfField(path)!));
    if (field) {
      focusField.current = field;
      goTo(steps.indexOf(stepOfField(field)!));
    }
  };

  const submit = async (values: WizardValues) => {
    setProblem(null);
    try {
      const service = await create.mutateAsync(values);
      navigate(`/services/${service.id}`, { state: { pendingChange: `Virtual service ${service.name} created.` } });
    } catch (err) {
      onFailure(err, values);
    }
  };

  const onSubmit = (event: FormEvent) => form.handleSubmit(step === 'review' ? submit : advance)(event);

  return (
    <form onSubmit={onSubmit} noValidate className="form form-wide wizard" aria-labelledby="wizard-step-heading">
      <StepList steps={steps} current={index} />
      <h3 id="wizard-step-heading" ref={heading} tabIndex={-1}>
        Step {index + 1} of {steps.length}: {STEP_TITLES[step]}
      </h3>
      {problem ? (
        <Alert tone="error" title="Not created">
          {problem}
        </Alert>
      ) : null}
      {step === 'kind' ? <KindStep form={form} /> : null}
      {step === 'listener' ? <ListenerStep form={form} /> : null}
      {step === 'pool' ? <PoolStep form={form} pools={pools} /> : null}
      {step === 'certificate' ? <CertificateStep form={form} certificates={certificates} /> : null}
      {step === 'review' ? <ReviewStep values={form.getValues()} pools={pools} certificates={certificates} /> : null}
      <FormActions>
        {index > 0 ? (
          <Button onClick={() => goTo(index - 1)} disabled={create.isPending}>
            Back
          </Button>
        ) : null}
        <Button type="submit" variant="primary" busy={create.isPending || checking}>
          {step === 'review' ? 'Create virtual service' : 'Next'}
        </Button>
        <ButtonLink to="/services" variant="ghost">
          Cancel
        </ButtonLink>
      </FormActions>
    </form>
  );
}
