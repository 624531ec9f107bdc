import { Alert, Button, FormActions, SelectField, TextField } from '@/components';
import { useServerForm } from '@/lib/forms';
import { emptyNewUser, NEW_USER_FIELDS, type NewUserValues, newUserSchema, PASSWORD_RULES, ROLES, USERNAME_HELP } from '../types';

type NewUserFormProps = { onSubmit: (values: NewUserValues) => Promise<unknown> };

/** A new person: name, password (twice) and role. */
export function NewUserForm({ onSubmit }: NewUserFormProps) {
  const { register, formState, problem, submit } = useServerForm<NewUserValues>({
    schema: newUserSchema,
    defaultValues: emptyNewUser(),
    // The API checks the password once: its messages go next to the first field.
    fields: NEW_USER_FIELDS,
    onSubmit,
    onSaved: (_values, form) => form.reset(emptyNewUser()),
  });
  const { errors } = formState;
  return (
    <form onSubmit={submit} noValidate className="form form-wide" aria-label="Add a person">
      {problem ? <Alert tone="error" title="Not added">{problem}</Alert> : null}
      <div className="form-row">
        <TextField label="User name" autoComplete="off" hint={USERNAME_HELP} error={errors.username?.message} {...register('username')} />
        <SelectField label="Role" options={ROLES} error={errors.role?.message} {...register('role')} />
      </div>
      <div className="form-row">
        <TextField label="Password" type="password" autoComplete="new-password" hint={PASSWORD_RULES} error={errors.password?.message} {...register('password')} />
        <TextField label="Repeat the password" type="password" autoComplete="new-password" error={errors.password_repeat?.message} {...register('password_repeat')} />
      </div>
      <FormActions>
        <Button type="submit" variant="primary" busy={formState.isSubmitting}>
          Add person
        </Button>
      </FormActions>
    </form>
  );
}
