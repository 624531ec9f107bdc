import { Alert, Button, FormActions, TextField } from '@/components';
import { useServerForm } from '@/lib/forms';
import { PASSWORD_RESET_FIELDS, PASSWORD_RULES, type PasswordResetValues, passwordResetSchema } from '../types';

type PasswordResetFormProps = {
  username: string;
  onSubmit: (values: PasswordResetValues) => Promise<unknown>;
  onCancel: () => void;
};

/** A new password for someone else; their console sessions end, their API tokens keep working. */
export function PasswordResetForm({ username, onSubmit, onCancel }: PasswordResetFormProps) {
  const { register, formState, problem, submit } = useServerForm<PasswordResetValues>({
    schema: passwordResetSchema,
    defaultValues: { password: '', password_repeat: '' },
    fields: PASSWORD_RESET_FIELDS,
    onSubmit,
  });
  const { errors } = formState;
  return (
    <form onSubmit={submit} noValidate className="form form-inline" aria-label={`New password for ${username}`}>
      {problem ? <Alert tone="error" title="Password not changed">{problem}</Alert> : null}
      <p className="muted">{username}’s console sessions end; their API tokens keep working (revoke them on the API tokens page).</p>
      <div className="form-row">
        <TextField label="New password" type="password" autoComplete="new-password" hint={PASSWORD_RULES} error={errors.password?.message} {...register('password')} />
        <TextField label="Repeat the new password" type="password" autoComplete="new-password" error={errors.password_repeat?.message} {...register('password_repeat')} />
      </div>
      <FormActions>
        <Button type="submit" variant="primary" size="small" busy={formState.isSubmitting}>
          Set password
        </Button>
        <Button variant="ghost" size="small" onClick={onCancel}>
          Cancel
        </Button>
      </FormActions>
    </form>
  );
}
