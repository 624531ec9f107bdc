import { api, listAll, unwrap } from '@/lib/api';
import type { Rule, RuleRequest } from '../types';

/** A virtual service's rules in evaluation order (position 0 first). */
export async function listRules(serviceId: number): Promise<Rule[]> {
  const rules = await listAll((limit, offset) =>
    unwrap(api.GET('/api/v1/rules/', { params: { query: { virtual_service: serviceId, limit, offset } } })),
  );
  return rules.sort((a, b) => (a.position ?? 0) - (b.position ?? 0));
}

/** Adds a rule at the end (no position given). */
export function createRule(body: RuleRequest): Promise<Rule> {
  return unwrap(api.POST('/api/v1/rules/', { body }));
}

/** Replaces a rule's content; its position is left as it is. */
export function updateRule(id: number, body: RuleRequest): Promise<Rule> {
  return unwrap(api.PATCH('/api/v1/rules/{id}/', { params: { path: { id } }, body }));
}

/** Moves a rule to `position`; the API shifts the others to keep 0..n-1. */
export function moveRule(id: number, position: number): Promise<Rule> {
  return unwrap(api.PATCH('/api/v1/rules/{id}/', { params: { path: { id } }, body: { position } }));
}

export function setRuleEnabled(id: number, enabled: boolean): Promise<Rule> {
  return unwrap(api.PATCH('/api/v1/rules/{id}/', { params: { path: { id } }, body: { enabled } }));
}

/** Deletes a rule; the API closes the gap in the positions. */
export async function deleteRule(id: number): Promise<void> {
  await unwrap(api.DELETE('/api/v1/rules/{id}/', { params: { path: { id } } }));
}
