import { screen, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { ApiError } from '@/lib/api';
import { renderWithProviders } from '@/test/render';
import { emptyRuleForm, toRuleRequest } from '../types';
import { RuleForm } from './RuleForm';

const pools = [
  { id: 3, name: 'web' },
  { id: 4, name: 'api' },
];

function renderForm(onSubmit = vi.fn().mockResolvedValue(undefined)) {
  const view = renderWithProviders(<RuleForm defaultValues={emptyRuleForm()} pools={pools} submitLabel="Add rule" onSubmit={onSubmit} />);
  return { ...view, onSubmit };
}

const condition = (n: number) => screen.getByRole('group', { name: `Condition ${n}` });

describe('RuleForm', () => {
  it('asks for a name only for header, cookie and query kinds, and for no values on presence kinds', async () => {
    const { user } = renderForm();
    expect(within(condition(1)).getByRole('textbox', { name: 'Values' })).toBeInTheDocument();
    expect(within(condition(1)).queryByRole('textbox', { name: 'Header name' })).not.toBeInTheDocument();
    await user.selectOptions(within(condition(1)).getByRole('combobox', { name: 'Match' }), 'header_present');
    expect(within(condition(1)).getByRole('textbox', { name: 'Header name' })).toBeInTheDocument();
    expect(within(condition(1)).queryByRole('textbox', { name: 'Values' })).not.toBeInTheDocument();
    await user.selectOptions(within(condition(1)).getByRole('combobox', { name: 'Match' }), 'cookie_equals');
    expect(within(condition(1)).getByRole('textbox', { name: 'Cookie name' })).toBeInTheDocument();
    expect(within(condition(1)).getByRole('textbox', { name: 'Values' })).toBeInTheDocument();
  });

  it('shows the fields of the chosen action', async () => {
    const { user } = renderForm();
    const action = screen.getByRole('combobox', { name: 'Then' });
    expect(screen.getByRole('combobox', { name: 'Pool' })).toBeInTheDocument();
    await user.selectOptions(action, 'redirect');
    expect(screen.getByRole('combobox', { name: 'Redirect code' })).toHaveValue('302');
    expect(screen.getByRole('textbox', { name: 'Location' })).toBeInTheDocument();
    expect(screen.queryByRole('combobox', { name: 'Pool' })).not.toBeInTheDocument();
    await user.selectOptions(action, 'remove_response_header');
    expect(screen.getByRole('textbox', { name: 'Header name' })).toBeInTheDocument();
    expect(screen.queryByRole('textbox', { name: 'Header value' })).not.toBeInTheDocument();
    expect(screen.getByText(/evaluation goes on to the next rule/)).toBeInTheDocument();
  });

  it('adds and removes condition rows and sends them as lists', async () => {
    const { user, onSubmit } = renderForm();
    await user.type(screen.getByRole('textbox', { name: 'Rule name' }), 'api-posts');
    await user.type(within(condition(1)).getByRole('textbox', { name: 'Values' }), '/api\n/v2');
    await user.click(screen.getByRole('button', { name: 'Add condition' }));
    await user.click(screen.getByRole('button', { name: 'Add condition' }));
    expect(screen.getAllByRole('group', { name: /^Condition \d$/ })).toHaveLength(3);
    await user.click(screen.getByRole('button', { name: 'Remove condition 3' }));
    await user.selectOptions(within(condition(2)).getByRole('combobox', { name: 'Match' }), 'method');
    await user.type(within(condition(2)).getByRole('textbox', { name: 'Values' }), 'POST');
    await user.click(within(condition(2)).getByRole('checkbox', { name: /Negate/ }));
    await user.selectOptions(screen.getByRole('combobox', { name: 'Pool' }), 'api');
    await user.click(screen.getByRole('button', { name: 'Add rule' }));

    expect(toRuleRequest(5, onSubmit.mock.calls[0]?.[0])).toEqual({
      virtual_service: 5,
      name: 'api-posts',
      enabled: true,
      conditions: [
        { kind: 'path_prefix', values: ['/api', '/v2'], name: '', negate: false },
        { kind: 'method', values: ['POST'], name: '', negate: true },
      ],
      action: 'use_pool',
      pool: 4,
      redirect_code: 302,
      redirect_location: '',
      deny_status: 403,
      header_name: '',
      header_value: '',
    });
  });

  it('refuses a condition without values or name, and an unknown method, before sending', async () => {
    const { user, onSubmit } = renderForm();
    await user.type(screen.getByRole('textbox', { name: 'Rule name' }), 'r1');
    await user.click(screen.getByRole('button', { name: 'Add condition' }));
    await user.selectOptions(within(condition(2)).getByRole('combobox', { name: 'Match' }), 'header_equals');
    await user.click(screen.getByRole('button', { name: 'Add condition' }));
    await user.selectOptions(within(condition(3)).getByRole('combobox', { name: 'Match' }), 'method');
    await user.type(within(condition(3)).getByRole('textbox', { name: 'Values' }), 'FETCH');
    await user.click(screen.getByRole('button', { name: 'Add rule' }));
    expect(within(condition(1)).getByRole('textbox', { name: 'Values' })).toHaveAccessibleDescription(/Enter at least one value/);
    expect(within(condition(2)).getByRole('textbox', { name: 'Header name' })).toHaveAccessibleDescription(/Enter the name/);
    expect(within(condition(3)).getByRole('textbox', { name: 'Values' })).toHaveAccessibleDescription(/Not a method: 'FETCH'/);
    expect(screen.getByRole('combobox', { name: 'Pool' })).toHaveAccessibleDescription('Choose the pool.');
    expect(onSubmit).not.toHaveBeenCalled();
  });

  it("puts the compiler's message on the condition value it concerns", async () => {
    const onSubmit = vi.fn().mockRejectedValue(
      new ApiError(400, {
        conditions: ['1/values/0: regular expression does not compile: missing ), unterminated subpattern at position 0'],
        name: ['Service 5 already has a rule named r1.'],
      }),
    );
    const { user } = renderForm(onSubmit);
    await user.type(screen.getByRole('textbox', { name: 'Rule name' }), 'r1');
    await user.type(within(condition(1)).getByRole('textbox', { name: 'Values' }), '/a');
    await user.click(screen.getByRole('button', { name: 'Add condition' }));
    await user.selectOptions(within(condition(2)).getByRole('combobox', { name: 'Match' }), 'path_regex');
    await user.type(within(condition(2)).getByRole('textbox', { name: 'Values' }), '(');
    await user.selectOptions(screen.getByRole('combobox', { name: 'Pool' }), 'web');
    await user.click(screen.getByRole('button', { name: 'Add rule' }));

    const values = await within(condition(2)).findByRole('textbox', { name: 'Values' });
    expect(values).toHaveAccessibleDescription(/^Entry 1: regular expression does not compile/);
    expect(values).toHaveAttribute('aria-invalid', 'true');
    expect(within(condition(1)).getByRole('textbox', { name: 'Values' })).not.toHaveAttribute('aria-invalid');
    expect(screen.getByRole('textbox', { name: 'Rule name' })).toHaveAccessibleDescription(/already has a rule named r1/);
    expect(screen.queryByRole('alert')).not.toBeInTheDocument();
  });
});
