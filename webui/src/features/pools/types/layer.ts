import type { CatalogChoice, Schemas } from '@/lib/api';

/**
 * Which daemon serves a pool: IPVS (layer 4, through keepalived) when its services forward
 * by NAT, direct routing or tunnel, HAProxy when they are proxied. A pool no service uses
 * yet (or used both ways, which the API refuses to apply) is `unknown`: the forms then offer
 * everything, marked by layer, and the server's messages say what does not fit.
 */
export type PoolLayer = 'ipvs' | 'proxy' | 'unknown';

/** What the pool pages need to know about a virtual service that uses the pool. */
export type PoolService = Pick<Schemas['VirtualService'], 'id' | 'name' | 'forwarding' | 'default_pool'>;

export function poolLayer(services: readonly PoolService[] | undefined): PoolLayer {
  const layers = new Set((services ?? []).map((service) => ((service.forwarding ?? 'proxy') === 'proxy' ? 'proxy' : 'ipvs')));
  return layers.size === 1 ? [...layers][0]! : 'unknown';
}

/** The pool's layer in a sentence; `services` undefined when they could not be read. */
export function describePoolLayer(layer: PoolLayer, services: readonly PoolService[] | undefined): string {
  if (layer === 'ipvs') return 'Layer 4 (IPVS): its services forward by NAT, direct routing or tunnel.';
  if (layer === 'proxy') return 'Proxy (HAProxy): its services are proxied.';
  const why =
    services === undefined
      ? 'The services using this pool could not be read'
      : services.length
        ? 'Both proxied and layer-4 services use this pool (applying refuses that)'
        : 'No service uses this pool as its default yet';
  return `${why}: every setting is offered, marked with the layer it needs.`;
}

/** A choice that only one layer has. */
export type LayerChoice<T> = { value: T; label: string; only?: 'ipvs' | 'proxy' };

/** The catalogue's choices (the API's, lib/api CHOICES) as the forms offer them: `only` marks one a single layer has. */
export function layerChoices<T extends string>(choices: readonly CatalogChoice<T>[]): LayerChoice<T>[] {
  return choices.map(({ value, label, layers }) => (layers.length === 1 ? { value, label, only: layers[0] } : { value, label }));
}

const GROUP = { any: 'Any layer', ipvs: 'Layer 4 (IPVS) only', proxy: 'HAProxy only' } as const;

/** The choices a pool of this layer has; for an unknown layer all of them, grouped by layer. */
export function choicesFor<T extends string>(choices: readonly LayerChoice<T>[], layer: PoolLayer) {
  if (layer !== 'unknown') return choices.filter((c) => !c.only || c.only === layer).map(({ value, label }) => ({ value, label }));
  const order = ['any', 'proxy', 'ipvs'] as const;
  return order.flatMap((group) =>
    choices.filter((c) => (c.only ?? 'any') === group).map(({ value, label }) => ({ value, label, group: GROUP[group] })),
  );
}
