/**
 * The options reference (docs/options.md) written from the option table, so the documented
 * defaults and meanings are the ones validation applies. A test keeps the file up to date.
 */
import type { Field, Table } from './fields.ts';
import { OPTION_TABLE, SHORTHAND_TABLE } from './table.ts';

function rows(table: Table, prefix: string, member: string): string[] {
  return Object.entries(table).flatMap(([key, field]: [string, Field<unknown, unknown>]) => {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    const name = `\`${path}\`${member === '' ? '' : ` (${member})`}`;
    const values = field.values === undefined ? '' : ` (${field.values.map((v) => `'${v}'`).join(', ')})`;
    const row = `| ${name} | ${field.kind}${values} | ${field.defaultDoc} | ${field.doc} |`;
    if (field.kind === 'group') return [row, ...rows(field.fields!, path, member)];
    if (field.kind === 'union') return [row, ...Object.entries(field.members!).flatMap(([type, fields]) => rows(fields, path, `type '${type}'`))];
    return [row];
  });
}

/** docs/options.md: every option with its kind, default and doc line, then the shorthands. */
export function optionsReference(): string {
  const head = ['| option | kind | default | meaning |', '|---|---|---|---|'];
  return [
    '# Options of `StreamEnvironment.create`',
    '',
    'Written from the option table (`src/api/options/table.ts`) by `optionsReference()`; do not edit by hand',
    '(`WEIR_UPDATE_DOCS=1 npx vitest run test/api/options-reference.test.ts` rewrites it). Every',
    'option is optional; an unknown option or a wrong value is a `ConfigError` naming it.',
    '',
    ...head,
    ...rows(OPTION_TABLE, '', ''),
    '',
    '## Shorthands',
    '',
    'Accepted at the top level for what has its place in a group or union; giving a field both ways is a `ConfigError`.',
    '',
    ...head,
    ...rows(SHORTHAND_TABLE, '', ''),
    '',
  ].join('\n');
}
