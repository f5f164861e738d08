import Module from 'node:module';
import { existsSync } from 'node:fs';

/**
 * Jest's global setup runs outside the module registry, so `moduleNameMapper` does not apply to
 * it. Our sources import siblings as `./x.js` (nodenext); map those to the `.ts` files here.
 */
const mod = Module as unknown as {
  _resolveFilename: (request: string, parent: { filename?: string } | undefined, ...rest: unknown[]) => string;
};
const original = mod._resolveFilename;
let installed = false;

export function installTsResolution(): void {
  if (installed) return;
  installed = true;
  mod._resolveFilename = function (request, parent, ...rest) {
    if (request.startsWith('.') && request.endsWith('.js') && parent?.filename) {
      const candidate = request.slice(0, -3) + '.ts';
      const base = parent.filename.replace(/[^/\\]+$/, '');
      if (existsSync(base + candidate)) return original.call(this, candidate, parent, ...rest);
    }
    return original.call(this, request, parent, ...rest);
  };
}
