import { z } from 'zod';
import type { Schemas } from '@/lib/api';
import {
  FIELD_NAME_HELP,
  FIELD_NAME_PATTERN,
  joinLines,
  objectName,
  REDIRECT_HELP,
  REDIRECT_PATTERN,
  splitLines,
  TEXT_HELP,
  TEXT_PATTERN,
} from '@/lib/validation';

export type Rule = Schemas['Rule'];
export type RuleRequest = Schemas['RuleRequest'];
export type Condition = Schemas['Condition'];
export type ConditionKind = Schemas['KindEnum'];
export type RuleAction = Schemas['ActionEnum'];

type KindInfo = { label: string; phrase: (name: string) => string; placeholder?: string };

/** Each condition kind: its label in the editor and how the rule list reads it. */
export const CONDITION_KINDS: Record<ConditionKind, KindInfo> = {
  path_prefix: { label: 'Path starts with', phrase: () => 'path starts with', placeholder: '/api' },
  path_suffix: { label: 'Path ends with', phrase: () => 'path ends with', placeholder: '/index.html' },
  path_extension: { label: 'File extension is', phrase: () => 'file extension is', placeholder: 'jpg' },
  path_contains: { label: 'Path contains', phrase: () => 'path contains', placeholder: '/admin/' },
  path_regex: { label: 'Path matches regex', phrase: () => 'path matches', placeholder: '^/v[0-9]+/' },
  host_exact: { label: 'Host is', phrase: () => 'host is', placeholder: 'www.example.com' },
  host_suffix: { label: 'Host ends with', phrase: () => 'host ends with', placeholder: '.example.com' },
  host_wildcard: { label: 'Host matches wildcard', phrase: () => 'host matches', placeholder: '*.example.com' },
  header_present: { label: 'Header is present', phrase: (name) => `header ${name} is present` },
  header_equals: { label: 'Header equals', phrase: (name) => `header ${name} is` },
  header_regex: { label: 'Header matches regex', phrase: (name) => `header ${name} matches` },
  cookie_present: { label: 'Cookie is present', phrase: (name) => `cookie ${name} is present` },
  cookie_equals: { label: 'Cookie equals', phrase: (name) => `cookie ${name} is` },
  query_present: { label: 'Query parameter is present', phrase: (name) => `query parameter ${name} is present` },
  query_equals: { label: 'Query parameter equals', phrase: (name) => `query parameter ${name} is` },
  method: { label: 'Method is', phrase: () => 'method is', placeholder: 'POST' },
  source_cidr: { label: 'Source address in', phrase: () => 'source address in', placeholder: '10.0.0.0/8' },
};

export const CONDITION_KIND_OPTIONS = (Object.keys(CONDITION_KINDS) as ConditionKind[]).map((value) => ({
  value,
  label: CONDITION_KINDS[value].label,
}));

/** Kinds that name a header, cookie or query parameter; kinds that take no values. */
export const isNamedKind = (kind: ConditionKind) => /^(header|cookie|query)_/.test(kind);
export const isPresenceKind = (kind: ConditionKind) => kind.endsWith('_present');

export const RULE_ACTIONS: readonly { value: RuleAction; label: string }[] = [
  { value: 'use_pool', label: 'Send to a pool' },
  { value: 'redirect', label: 'Redirect' },
  { value: 'deny', label: 'Deny' },
  { value: 'set_request_header', label: 'Set a request header' },
  { value: 'remove_request_header', label: 'Remove a request header' },
  { value: 'set_response_header', label: 'Set a response header' },
  { value: 'remove_response_header', label: 'Remove a response header' },
];
export const REDIRECT_CODES = [301, 302, 303, 307, 308] as const;
export const DENY_STATUSES = [400, 401, 403, 404, 405, 407, 408, 410, 413, 425, 429, 500, 501, 502, 503, 504] as const;
export const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'CONNECT', 'TRACE'] as const;

/** Header actions apply and evaluation goes on; the others end it when the rule matches. */
export const isTerminalAction = (action: RuleAction) => !action.endsWith('_header');

// --- form ---

const conditionSchema = z
  .object({
    kind: z.enum(Object.keys(CONDITION_KINDS) as [ConditionKind, ...ConditionKind[]]),
    values: z.string(),
    name: z.string().trim(),
    negate: z.boolean(),
  })
  .superRefine((condition, ctx) => {
    if (isNamedKind(condition.kind) && !FIELD_NAME_PATTERN.test(condition.name)) {
      ctx.addIssue({ code: 'custom', path: ['name'], message: condition.name ? FIELD_NAME_HELP : 'Enter the name.' });
    }
    const values = splitLines(condition.values);
    if (!isPresenceKind(condition.kind) && values.length === 0) {
      ctx.addIssue({ code: 'custom', path: ['values'], message: 'Enter at least one value.' });
    }
    if (condition.kind === 'method') {
      const bad = values.find((value) => !(HTTP_METHODS as readonly string[]).includes(value));
      if (bad) ctx.addIssue({ code: 'custom', path: ['values'], message: `Not a method: '${bad}' (${HTTP_METHODS.join(', ')}).` });
    }
  });

export const ruleFormSchema = z
  .object({
    name: objectName,
    enabled: z.boolean(),
    conditions: z.array(conditionSchema).min(1, 'A rule needs at least one condition.').max(16, 'At most 16 conditions.'),
    action: z.enum(RULE_ACTIONS.map((a) => a.value) as [RuleAction, ...RuleAction[]]),
    pool: z.string(),
    redirect_code: z.string(),
    redirect_location: z.string().trim(),
    deny_status: z.string(),
    header_name: z.string().trim(),
    header_value: z.string(),
  })
  .superRefine((rule, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if (rule.action === 'use_pool' && !rule.pool) issue('pool', 'Choose the pool.');
    if (rule.action === 'redirect' && !REDIRECT_PATTERN.test(rule.redirect_location)) issue('redirect_location', REDIRECT_HELP);
    if (rule.action.endsWith('_header') && !FIELD_NAME_PATTERN.test(rule.header_name)) {
      issue('header_name', rule.header_name ? FIELD_NAME_HELP : 'Enter the header name.');
    }
    if (rule.action.startsWith('set_') && !TEXT_PATTERN.test(rule.header_value)) {
      issue('header_value', rule.header_value ? TEXT_HELP : 'Enter the value.');
    }
  });
export type RuleFormValues = z.infer<typeof ruleFormSchema>;
export type ConditionFormValues = RuleFormValues['conditions'][number];

type ConditionField = `conditions.${number}.${'kind' | 'values' | 'name' | 'negate'}`;
export type RuleFormField = keyof RuleFormValues | ConditionField;

const ACTION_FIELDS: Record<RuleAction, readonly (keyof RuleFormValues)[]> = {
  use_pool: ['pool'],
  redirect: ['redirect_code', 'redirect_location'],
  deny: ['deny_status'],
  set_request_header: ['header_name', 'header_value'],
  remove_request_header: ['header_name'],
  set_response_header: ['header_name', 'header_value'],
  remove_response_header: ['header_name'],
};

/** The fields the rule form shows for this action and these condition rows. */
export function ruleFormFields(action: RuleAction, conditions: readonly ConditionFormValues[]): RuleFormField[] {
  const rows = conditions.flatMap((condition, i): ConditionField[] => [
    `conditions.${i}.kind`,
    ...(isPresenceKind(condition.kind) ? [] : [`conditions.${i}.values` as const]),
    ...(isNamedKind(condition.kind) ? [`conditions.${i}.name` as const] : []),
    `conditions.${i}.negate`,
  ]);
  return ['name', 'enabled', 'conditions', 'action', ...ACTION_FIELDS[action], ...rows];
}

export function emptyCondition(): ConditionFormValues {
  return { kind: 'path_prefix', values: '', name: '', negate: false };
}

export function emptyRuleForm(): RuleFormValues {
  return {
    name: '', enabled: true, conditions: [emptyCondition()], action: 'use_pool', pool: '',
    redirect_code: '302', redirect_location: '', deny_status: '403', header_name: '', header_value: '',
  };
}

export function toRuleForm(rule: Rule): RuleFormValues {
  return {
    name: rule.name,
    enabled: rule.enabled ?? true,
    conditions: rule.conditions.map((c) => ({ kind: c.kind, values: joinLines(c.values), name: c.name ?? '', negate: c.negate ?? false })),
    action: rule.action,
    pool: rule.pool == null ? '' : String(rule.pool),
    redirect_code: String(rule.redirect_code ?? 302),
    redirect_location: rule.redirect_location ?? '',
    deny_status: String(rule.deny_status ?? 403),
    header_name: rule.header_name ?? '',
    header_value: rule.header_value ?? '',
  };
}

/** The rule for the API; values and names that do not apply to a kind or action are left empty. */
export function toRuleRequest(serviceId: number, values: RuleFormValues): RuleRequest {
  const header = values.action.endsWith('_header');
  return {
    virtual_service: serviceId,
    name: values.name,
    enabled: values.enabled,
    conditions: values.conditions.map((c) => ({
      kind: c.kind,
      values: isPresenceKind(c.kind) ? [] : splitLines(c.values),
      name: isNamedKind(c.kind) ? c.name : '',
      negate: c.negate,
    })),
    action: values.action,
    pool: values.action === 'use_pool' ? Number(values.pool) : null,
    redirect_code: Number(values.redirect_code) as RuleRequest['redirect_code'],
    redirect_location: values.action === 'redirect' ? values.redirect_location : '',
    deny_status: Number(values.deny_status) as RuleRequest['deny_status'],
    header_name: header ? values.header_name : '',
    header_value: values.action.startsWith('set_') ? values.header_value : '',
  };
}

// --- reading a rule ---

/** "path starts with /api or /v2" — one condition as the rule list shows it. */
export function describeCondition(condition: Condition): string {
  const phrase = CONDITION_KINDS[condition.kind].phrase(condition.name || '?');
  const values = condition.values?.length ? ` ${condition.values.join(' or ')}` : '';
  return `${condition.negate ? 'not ' : ''}${phrase}${values}`;
}

/** "path starts with /api AND method is POST". */
export function describeConditions(conditions: readonly Condition[]): string {
  return conditions.map(describeCondition).join(' AND ');
}

/** "use pool api", "redirect 301 to /new", "deny with 403", "set request header X-A: 1". */
export function describeAction(rule: Rule, poolName: (id: number) => string): string {
  switch (rule.action) {
    case 'use_pool':
      return `use pool ${rule.pool == null ? '?' : poolName(rule.pool)}`;
    case 'redirect':
      return `redirect ${rule.redirect_code ?? 302} to ${rule.redirect_location}`;
    case 'deny':
      return `deny with ${rule.deny_status ?? 403}`;
    case 'set_request_header':
    case 'set_response_header':
      return `set ${rule.action.split('_')[1]} header ${rule.header_name}: ${rule.header_value}`;
    default:
      return `remove ${rule.action.split('_')[1]} header ${rule.header_name}`;
  }
}
