import { zodResolver } from '@hookform/resolvers/zod';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { Alert, Button, TextField } from '@/components';
import { showServerErrors } from '@/lib/forms';
import { NAME_HELP } from '@/lib/validation';
import { NODE_FORM_FIELDS, type NodeFormValues, nodeFormSchema } from '../types';

type NodeFormProps = { onSubmit: (values: NodeFormValues) => Promise<unknown> };

export function NodeForm({ onSubmit }: NodeFormProps) {
  const [problem, setProblem] = useState<string | null>(null);
  const { register, handleSubmit, setError, reset, formState } = useForm<NodeFormValues>({
    resolver: zodResolver(nodeFormSchema),
    defaultValues: { name: '' },
  });
  const submit = handleSubmit(async (values) => {
    setProblem(null);
    try {
      await onSubmit(values);
      reset({ name: '' });
    } catch (err) {
      setProblem(showServerErrors(err, setError, NODE_FORM_FIELDS));
    }
  });
  return (
    <form onSubmit={submit} noValidate className="form form-apply">
      {problem ? <Alert tone="error" title="Not added">{problem}</Alert> : null}
      <TextField label="Node name" hint={`The name the agent is configured with. ${NAME_HELP}`} error={formState.errors.name?.message} {...register('name')} />
      <Button type="submit" variant="primary" busy={formState.isSubmitting}>
        Add node
      </Button>
    </form>
  );
}
