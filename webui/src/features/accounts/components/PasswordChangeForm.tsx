import { Alert, Button, CheckboxField, FormActions, TextField } from '@/components';
import { useServerForm } from '@/lib/forms';
import {
  emptyPasswordChange,
  PASSWORD_CHANGE_FIELDS,
  PASSWORD_RULES,
  type PasswordChangeValues,
  passwordChangeSchema,
} from '../types';

type PasswordChangeFormProps = { onSubmit: (values: PasswordChangeValues) => Promise<unknown> };

export function PasswordChangeForm({ onSubmit }: PasswordChangeFormProps) {
  const { register, formState, problem, submit } = useServerForm<PasswordChangeValues>({
    schema: passwordChangeSchema,
    defaultValues: emptyPasswordChange(),
    fields: PASSWORD_CHANGE_FIELDS,
    onSubmit,
    onSaved: (_values, form) => form.reset(emptyPasswordChange()),
  });
  const { errors } = formState;
  return (
    <form onSubmit={submit} noValidate className="form" aria-label="Change your password">
      {problem ? <Alert tone="error" title="Password not changed">{problem}</Alert> : null}
      <TextField label="Current password" type="password" autoComplete="current-password" error={errors.old_password?.message} {...register('old_password')} />
      <TextField label="New password" type="password" autoComplete="new-password" hint={PASSWORD_RULES} error={errors.new_password?.message} {...register('new_password')} />
      <TextField label="Repeat the new password" type="password" autoComplete="new-password" error={errors.new_password_repeat?.message} {...register('new_password_repeat')} />
      <CheckboxField
        label="Also revoke all my API tokens"
        hint="Your other console sessions end in any case; this one goes on."
        error={errors.revoke_tokens?.message}
        {...register('revoke_tokens')}
      />
      <FormActions>
        <Button type="submit" variant="primary" busy={formState.isSubmitting}>
          Change password
        </Button>
      </FormActions>
    </form>
  );
}
