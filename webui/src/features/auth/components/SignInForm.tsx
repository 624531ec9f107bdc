import { Alert, Button, TextField } from '@/components';
import { ApiError, errorMessage } from '@/lib/api';
import { useServerForm } from '@/lib/forms';
import { type SignInValues, signInSchema } from '../types';

type SignInFormProps = { onSubmit: (values: SignInValues) => Promise<unknown> };

function signInProblem(error: unknown): string | null {
  if (error instanceof ApiError && (error.status === 401 || error.status === 403)) return 'Wrong user name or password.';
  if (error instanceof ApiError && error.status === 429) return `Too many attempts. ${errorMessage(error)}`;
  return null;
}

export function SignInForm({ onSubmit }: SignInFormProps) {
  const { register, formState, problem, submit } = useServerForm<SignInValues>({
    schema: signInSchema,
    defaultValues: { username: '', password: '' },
    fields: ['username', 'password'],
    onSubmit,
    explain: signInProblem,
  });
  return (
    <form onSubmit={submit} noValidate className="form">
      {problem ? <Alert tone="error">{problem}</Alert> : null}
      <TextField label="User name" autoComplete="username" autoFocus error={formState.errors.username?.message} {...register('username')} />
      <TextField label="Password" type="password" autoComplete="current-password" error={formState.errors.password?.message} {...register('password')} />
      <Button type="submit" variant="primary" busy={formState.isSubmitting} className="button-block">
        Sign in
      </Button>
    </form>
  );
}
