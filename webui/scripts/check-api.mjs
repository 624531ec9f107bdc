// Fails when src/lib/api/schema.d.ts no longer matches ../api/openapi.yaml.
// Regenerates into a temporary file with the same generator and compares byte for byte.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const committed = 'src/lib/api/schema.d.ts';
const dir = mkdtempSync(join(tmpdir(), 'fulcrum-schema-'));
let same;
try {
  const fresh = join(dir, 'schema.d.ts');
  execFileSync('npx', ['--no-install', 'openapi-typescript', '../api/openapi.yaml', '-o', fresh], { stdio: 'ignore' });
  same = readFileSync(fresh, 'utf8') === readFileSync(committed, 'utf8');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (!same) {
  console.error(`${committed} is out of date with ../api/openapi.yaml: run \`npm run gen:api\`.`);
  process.exitCode = 1;
} else {
  console.log(`${committed} matches ../api/openapi.yaml.`);
}
