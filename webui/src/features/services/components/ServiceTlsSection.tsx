import { Controller, type UseFormReturn, useWatch } from 'react-hook-form';
import { ButtonLink, CheckboxField, CheckboxListField, FormSection, SelectField, TextField } from '@/components';
import { CLIENT_AUTH, type CertificateChoice, type ServiceFormValues, TLS_POLICIES } from '../types';

type SectionProps = { form: UseFormReturn<ServiceFormValues>; certificates: readonly CertificateChoice[] };

const toOption = (certificate: CertificateChoice) => ({ value: String(certificate.id), label: certificate.name });

/** TLS offload: shown for HTTPS services only. */
export function ServiceTlsSection({ form, certificates }: SectionProps) {
  const { register, control, formState } = form;
  const { errors } = formState;
  const clientAuth = useWatch({ control, name: 'client_auth' });
  const withKey = certificates.filter((certificate) => certificate.has_key).map(toOption);
  const bundles = certificates.map((c) => ({ value: String(c.id), label: c.is_ca ? `${c.name} (CA)` : c.name }));
  const noneYet = (
    <>
      No certificate with a key yet: <ButtonLink to="/certificates" variant="ghost" size="small">Certificates</ButtonLink>
    </>
  );
  return (
    <FormSection title="TLS" description="The certificates presented to clients and how TLS is negotiated.">
      <SelectField
        label="Certificate"
        placeholder={withKey.length ? 'Choose a certificate…' : 'No certificates yet'}
        options={withKey}
        hint={withKey.length ? 'Served to clients that send no SNI or an unknown name.' : noneYet}
        error={errors.default_certificate?.message}
        {...register('default_certificate')}
      />
      <Controller
        control={control}
        name="sni_certificates"
        render={({ field }) => (
          <CheckboxListField
            label="SNI certificates"
            options={withKey}
            value={field.value}
            onChange={field.onChange}
            hint="Further certificates, chosen by the name the client asks for."
            empty="None to choose from."
            error={errors.sni_certificates?.message}
          />
        )}
      />
      <div className="form-row">
        <SelectField label="TLS policy" options={TLS_POLICIES} error={errors.tls_policy?.message} {...register('tls_policy')} />
        <TextField
          label="HSTS max age (s)"
          type="number"
          min={0}
          hint="0 = no HSTS header."
          error={errors.hsts_max_age_s?.message}
          {...register('hsts_max_age_s', { valueAsNumber: true })}
        />
      </div>
      <CheckboxField label="Offer HTTP/2 (ALPN h2)" error={errors.alpn_h2?.message} {...register('alpn_h2')} />
      <div className="form-row">
        <SelectField label="Client certificates" options={CLIENT_AUTH} error={errors.client_auth?.message} {...register('client_auth')} />
        {clientAuth !== 'none' ? (
          <SelectField
            label="Client CA"
            placeholder="Choose a CA bundle…"
            options={bundles}
            hint="Client certificates must chain to it."
            error={errors.client_ca?.message}
            {...register('client_ca')}
          />
        ) : null}
      </div>
    </FormSection>
  );
}
