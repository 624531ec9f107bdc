// Writes a gzip copy beside every text asset of dist/ (index.html, JS, CSS, SVG): WhiteNoise
// serves file.gz to browsers that accept it, so the console's ~780 KiB of JS goes as ~200 KiB.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { constants, gzipSync } from 'node:zlib';

const TEXT = /\.(html|js|css|svg|json|map)$/;

function* files(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* files(path);
    else if (TEXT.test(name)) yield path;
  }
}

let before = 0;
let after = 0;
for (const path of files(fileURLToPath(new URL('../dist', import.meta.url)))) {
  const data = readFileSync(path);
  const packed = gzipSync(data, { level: constants.Z_BEST_COMPRESSION });
  before += data.length;
  if (packed.length < data.length) {
    writeFileSync(`${path}.gz`, packed);
    after += packed.length;
  } else after += data.length;
}
console.log(`compressed dist/: ${Math.round(before / 1024)} KiB -> ${Math.round(after / 1024)} KiB gzip`);
