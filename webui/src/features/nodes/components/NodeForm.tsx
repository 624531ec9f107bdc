import { Alert, Button, TextField } from '@/components';
import { useServerForm } from '@/lib/forms';
import { NAME_HELP } from '@/lib/validation';
import { NODE_FORM_FIELDS, type NodeFormValues, nodeFormSchema } from '../types';

type NodeFormProps = { onSubmit: (values: NodeFormValues) => Promise<unknown> };

export function NodeForm({ onSubmit }: NodeFormProps) {
  const { register, formState, problem, submit } = useServerForm<NodeFormValues>({
    schema: nodeFormSchema,
    defaultValues: { name: '' },
    fields: NODE_FORM_FIELDS,
    onSubmit,
    onSaved: (_values, form) => form.reset({ name: '' }),
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
