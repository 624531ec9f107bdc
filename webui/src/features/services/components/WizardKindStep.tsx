import { type UseFormReturn, useWatch } from 'react-hook-form';
import { SERVICE_KINDS, type ServiceKind, type WizardValues, withKind } from '../types';
import { ChoiceGroup } from './WizardChoiceGroup';

const CHANGED_BY_KIND = ['kind', 'forwarding', 'protocol', 'port', 'algorithm', 'check_type'] as const;

/** Step 1: what the service carries, which decides the daemon and the defaults of later steps. */
export function KindStep({ form }: { form: UseFormReturn<WizardValues> }) {
  const kind = useWatch({ control: form.control, name: 'kind' });
  const choose = (next: ServiceKind) => {
    const values = withKind(form.getValues(), next);
    for (const field of CHANGED_BY_KIND) form.setValue(field, values[field]);
  };
  return <ChoiceGroup legend="What will this virtual service carry?" choices={SERVICE_KINDS} value={kind} onChange={choose} />;
}
