/** The stack under test, described by the harness through the environment. */

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: see webui/README.md (e2e).`);
  return value;
}

export type MemberSpec = { name: string; address: string; port: number };

/** `s1=10.77.2.11:80,s2=10.77.2.12:80` → [{name: 's1', address: '10.77.2.11', port: 80}, ...] */
export function parseMembers(spec: string): MemberSpec[] {
  return spec
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)
    .map((item) => {
      const match = /^([^=]+)=(.+):(\d+)$/.exec(item);
      if (!match) throw new Error(`FULCRUM_MEMBERS: cannot read ${JSON.stringify(item)} (want name=address:port)`);
      const [, name, address, port] = match as unknown as [string, string, string, string];
      return { name, address: address.replace(/^\[(.*)\]$/, '$1'), port: Number(port) };
    });
}

export const credentials = () => ({ username: required('FULCRUM_USER'), password: required('FULCRUM_PASSWORD') });
export const vip = () => process.env.FULCRUM_VIP ?? '10.77.100.10';
export const members = () => parseMembers(process.env.FULCRUM_MEMBERS ?? 's1=10.77.2.11:80,s2=10.77.2.12:80,s3=10.77.2.13:80');
export const nodeName = () => process.env.FULCRUM_NODE;
