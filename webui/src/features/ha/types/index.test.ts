import { describe, expect, it } from 'vitest';
import { emptyHaGroupForm, formatAdvert, mirroredNodes, nextFreeVrid, translateHaGroupPath } from './index';

describe('HA group helpers', () => {
  it('mirrors priorities: the master becomes the last choice, the last choice the master', () => {
    const nodes = [
      { node: 1, priority: 150, interface: '' },
      { node: 2, priority: 100, interface: 'ens3' },
      { node: 3, priority: 120, interface: '' },
    ];
    expect(mirroredNodes(nodes)).toEqual([
      { node: 1, priority: 100, interface: '' },
      { node: 3, priority: 120, interface: '' },
      { node: 2, priority: 150, interface: 'ens3' },
    ]);
  });

  it('finds the next VRID nobody uses, wrapping round after 255', () => {
    expect(nextFreeVrid(51, [{ vrid: 51 }, { vrid: 52 }])).toBe(53);
    expect(nextFreeVrid(255, [{ vrid: 255 }, { vrid: 1 }])).toBe(2);
    expect(nextFreeVrid(1, Array.from({ length: 255 }, (_, i) => ({ vrid: i + 1 })))).toBeNaN();
  });

  it("moves the compiler's node paths to the node's row", () => {
    const values = { ...emptyHaGroupForm(), nodes: [{ node: '2', priority: 150, interface: '' }, { node: '1', priority: 100, interface: '' }] };
    const nodes = [
      { id: 1, name: 'lb1', address: null, standby: false, vrrp: [] },
      { id: 2, name: 'lb2', address: null, standby: false, vrrp: [] },
    ];
    expect(translateHaGroupPath(['nodes', 'lb1', 'priority'], values, nodes)).toEqual(['nodes', '1', 'priority']);
    expect(translateHaGroupPath(['nodes', 'lb2'], values, nodes)).toEqual(['nodes', '0', 'node']);
    expect(translateHaGroupPath(['non_field_errors', 'nodes', 'lb1', 'address'], values, nodes)).toEqual(['nodes', '1', 'node', "lb1's address"]);
    expect(translateHaGroupPath(['nodes', '0', 'priority'], values, nodes)).toEqual(['nodes', '0', 'priority']);
    expect(translateHaGroupPath(['nodes', 'lb9'], values, nodes)).toEqual(['nodes', 'lb9']);
  });

  it('reads advert intervals as people say them', () => {
    expect([formatAdvert(200), formatAdvert(1000), formatAdvert(3000), formatAdvert(1500)]).toEqual(['200 ms', '1 s', '3 s', '1500 ms']);
  });
});
