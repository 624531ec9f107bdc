import { Alert, Button, FormActions, SelectField, TextField } from '@/components';
import { useServerForm } from '@/lib/forms';
import { emptyToken, MAX_TOKEN_DAYS, type Role, rolesUpTo, TOKEN_FIELDS, TOKEN_NAME_HELP, type TokenValues, tokenSchema } from '../types';

type TokenFormProps = { ownRole: Role | undefined; onSubmit: (values: TokenValues) => Promise<unknown> };

/** A new named token: its role is at most yours, its lifetime in days (empty: never expires). */
export function TokenForm({ ownRole, onSubmit }: TokenFormProps) {
  const fresh = () => emptyToken(ownRole === 'admin' ? 'operator' : (ownRole ?? 'viewer'));
  const { register, formState, problem, submit } = useServerForm<TokenValues>({
    schema: tokenSchema,
    defaultValues: fresh(),
    fields: TOKEN_FIELDS,
    onSubmit,
    onSaved: (_values, form) => form.reset(fresh()),
  });
  const { errors } = formState;
  return (
    <form onSubmit={submit} noValidate className="form form-wide" aria-label="Create an API token">
      {problem ? <Alert tone="error" title="Not created">{problem}</Alert> : null}
      <div className="form-row">
        <TextField label="Token name" hint={TOKEN_NAME_HELP} autoComplete="off" error={errors.name?.message} {...register('name')} />
        <SelectField label="Role" options={rolesUpTo(ownRole)} hint="At most your own role." error={errors.role?.message} {...register('role')} />
        <TextField
          label="Expires after (days)"
          inputMode="numeric"
          className="field-narrow"
          hint={`1 to ${MAX_TOKEN_DAYS}; empty: never expires.`}
          error={errors.expires_in_days?.message}
          {...register('expires_in_days')}
        />
      </div>
      <FormActions>
        <Button type="submit" variant="primary" busy={formState.isSubmitting}>
          Create token
        </Button>
      </FormActions>
    </form>
  );
}
