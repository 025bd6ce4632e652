/**
 * The esbuild plugin that decides what of a job module is shipped: its own files are bundled;
 * packages (`weir-stream`, `weir-stream/postgres`, `pg`, ...) and node builtins stay imports,
 * resolved on the task manager's host; a relative import that reaches into Weir's own package
 * (src/ or dist/, as test fixtures in a clone do) becomes the public specifier of that file, or is
 * refused when the file is internal, since the task manager's Weir is what runs it.
 */
import * as path from 'node:path';
import type { OnResolveArgs, OnResolveResult, Plugin } from 'esbuild';
import type { WeirPackage } from './weir-package.ts';

/** Marks the plugin's own `build.resolve` calls, which it lets esbuild answer. */
const OWN_RESOLVE = Symbol('job-imports-plugin');

/**
 * A package or builtin import (`pg`, `weir-stream/redis`, `node:fs`, `fs`): not relative, not
 * absolute, not another URL scheme, not a package-internal `#import` (those resolve to own files).
 */
export function isPackageImport(specifier: string): boolean {
  if (specifier.startsWith('node:')) return true;
  return !/^(?:\.\.?(?:\/|$)|\/|[a-zA-Z]:[\\/]|#|[a-zA-Z][a-zA-Z\d+.-]*:)/.test(specifier);
}

export function jobImportsPlugin(weir: WeirPackage): Plugin {
  const internalDirs = ['src', 'dist'].map((d) => path.join(weir.root, d) + path.sep);
  return {
    name: 'weir-job-imports',
    setup(build) {
      build.onResolve({ filter: /.*/ }, async (args): Promise<OnResolveResult | undefined> => {
        if (args.pluginData === OWN_RESOLVE || args.kind === 'entry-point') return undefined;
        if (isPackageImport(args.path)) return { path: args.path, external: true };
        const resolved = await build.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: OWN_RESOLVE });
        // Unresolvable: esbuild resolves it again and reports it where the import is.
        if (resolved.errors.length > 0) return undefined;
        if (!internalDirs.some((d) => resolved.path.startsWith(d))) return resolved;
        return weirImport(weir, args, resolved.path);
      });
    },
  };
}

/** A relative import of a file of Weir itself: its public specifier, or an error naming the importer. */
function weirImport(weir: WeirPackage, args: OnResolveArgs, file: string): OnResolveResult {
  const specifier = weir.publicFiles.get(file);
  if (specifier !== undefined) return { path: specifier, external: true };
  const internal = path.relative(weir.root, file);
  const choices = weir.specifiers.map((s) => `'${s}'`).join(', ');
  // esbuild puts the importer's file:line before the text.
  const text =
    `imports Weir's internal file ${internal} ('${args.path}'); Weir's own files are not shipped, a task manager runs its own Weir: ` +
    `import from 'weir-stream' instead (public entries: ${choices})`;
  return { errors: [{ text }] };
}
