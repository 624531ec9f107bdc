import { describe, expect, it } from 'vitest';
import { CHECK_SCRIPT_PATTERN, DNS_NAME_PATTERN, INTERFACE_PATTERN, ipAddress, isMulticast, objectName, port, weight } from './validation';

describe('API input rules', () => {
  it.each(['web', 'a', 'web-1.prod_2', 'A'.repeat(63)])('accepts the name %s', (name) => {
    expect(objectName.safeParse(name).success).toBe(true);
  });

  it.each(['', '-web', '.web', 'web site', 'web/1', 'A'.repeat(64), 'wéb'])('refuses the name %j', (name) => {
    expect(objectName.safeParse(name).success).toBe(false);
  });

  it('keeps ports within 1-65535 and whole', () => {
    expect(port.safeParse(1).success).toBe(true);
    expect(port.safeParse(65535).success).toBe(true);
    expect(port.safeParse(0).success).toBe(false);
    expect(port.safeParse(65536).success).toBe(false);
    expect(port.safeParse(80.5).success).toBe(false);
    expect(port.safeParse(Number.NaN).error?.issues[0]?.message).toBe('Enter the port.');
  });

  it('keeps weights within 0-256', () => {
    expect(weight.safeParse(0).success).toBe(true);
    expect(weight.safeParse(256).success).toBe(true);
    expect(weight.safeParse(257).error?.issues[0]?.message).toBe('The weight must be between 0 and 256.');
  });

  it.each(['10.0.0.1', '0.0.0.0', '2001:db8::1', '::'])('accepts the address %s', (address) => {
    expect(ipAddress.safeParse(address).success).toBe(true);
  });

  it.each(['10.0.0.300', '10.0.0', 'example.com', '10.0.0.1/24', ''])('refuses the address %j', (address) => {
    expect(ipAddress.safeParse(address).success).toBe(false);
  });

  it.each([
    ['224.0.0.81', true], ['239.255.255.255', true], ['ff02::12', true], ['10.0.0.1', false], ['240.0.0.1', false], ['2001:db8::1', false], ['x', false],
  ])('tells whether %s is a multicast address', (address, multicast) => {
    expect(isMulticast(address)).toBe(multicast);
  });

  it('follows the layer-4 rules of the compiler', () => {
    expect(['eth1', 'bond0.100', 'vlan@eth0'].every((name) => INTERFACE_PATTERN.test(name))).toBe(true);
    expect(['eth 1', 'a'.repeat(16), 'eth1\nlvs_flush'].some((name) => INTERFACE_PATTERN.test(name))).toBe(false);
    expect(['.', 'www.example.com', '_sip._tcp.example.com.'].every((name) => DNS_NAME_PATTERN.test(name))).toBe(true);
    expect(DNS_NAME_PATTERN.test('bad name')).toBe(false);
    expect(CHECK_SCRIPT_PATTERN.test('/usr/lib/fulcrum/checks/smtp --port=25 host=a.b')).toBe(true);
    expect(['/bin/sh -c reboot', '/etc/fulcrum/checks/../../bin/sh', '/etc/fulcrum/checks/x;reboot'].some((s) => CHECK_SCRIPT_PATTERN.test(s))).toBe(false);
  });
});
