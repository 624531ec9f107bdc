import { type UseFormReturn, useWatch } from 'react-hook-form';
import { SelectField, TextField } from '@/components';
import { NAME_HELP } from '@/lib/validation';
import type { CertificateChoice, WizardValues } from '../types';
import { ChoiceGroup } from './WizardChoiceGroup';

/** A service presents a certificate with its key; CA bundles only verify. */
export const presentable = (certificates: readonly CertificateChoice[]) => certificates.filter((c) => c.has_key && !c.is_ca);

/** Step 4 (HTTPS): the certificate the service presents — a stored one, or a self-signed one made now. */
export function CertificateStep({ form, certificates }: { form: UseFormReturn<WizardValues>; certificates: readonly CertificateChoice[] }) {
  const { register, control, formState, setValue, getValues } = form;
  const { errors } = formState;
  const mode = useWatch({ control, name: 'certificate_mode' });
  const stored = presentable(certificates);
  const choices = [
    ...(stored.length ? [{ value: 'existing' as const, label: 'Use a stored certificate' }] : []),
    {
      value: 'generate' as const,
      label: 'Generate a self-signed certificate',
      explain: 'Made on the appliance (ECDSA P-256, one year). Browsers warn about it: upload a CA-signed one later on the Certificates page.',
    },
  ];
  const choose = (value: WizardValues['certificate_mode']) => {
    setValue('certificate_mode', value);
    // A certificate made now is named after the service until the operator names it.
    if (value === 'generate' && !getValues('cert_name')) setValue('cert_name', getValues('name').trim());
  };
  return (
    <div className="form-section-body">
      <ChoiceGroup legend="Certificate" choices={choices} value={mode} onChange={(value) => choose(value)} />
      {mode === 'existing' ? (
        <SelectField
          label="Stored certificate"
          placeholder="Choose a certificate…"
          options={stored.map((c) => ({ value: String(c.id), label: c.name }))}
          error={errors.certificate?.message}
          {...register('certificate')}
        />
      ) : (
        <div className="form-row">
          <TextField label="Certificate name" hint={NAME_HELP} autoComplete="off" error={errors.cert_name?.message} {...register('cert_name')} />
          <TextField label="Common name" placeholder="www.example.com" hint="The host name clients use." error={errors.cert_common_name?.message} {...register('cert_common_name')} />
        </div>
      )}
    </div>
  );
}
