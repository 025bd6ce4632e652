/**
 * Option descriptors: one object per option says what may be given, what it resolves to, its
 * default and its doc line. Validation, defaults, error messages and the resolved types all come
 * from these (see `table.ts`); every rejection is a ConfigError naming the option's path.
 */
import { ConfigError } from '../../core/errors.ts';

/** What an option is, for the reference and the table test. */
export type FieldKind = 'int' | 'number' | 'boolean' | 'enum' | 'text' | 'group' | 'union';

/** The fields of one group resolved so far, in table order: what a derived default or a check reads. */
export type Siblings = Readonly<Record<string, unknown>>;

/**
 * One option: `resolve` checks the value given (undefined: not given) at `path` and returns it with
 * its default applied. `G` is the type a user gives, `R` the resolved type.
 */
export interface Field<G, R> {
  readonly kind: FieldKind;
  /** One line for the reference: what the option does. */
  readonly doc: string;
  /** The default in words (`1000`, `4 x channelCapacity`, `decided when the job runs`). */
  readonly defaultDoc: string;
  readonly resolve: (value: unknown, path: string, siblings: Siblings) => R;
  /** A group's fields. */
  readonly fields?: Table;
  /** A union's members by discriminant value, each a table of its other fields. */
  readonly members?: Readonly<Record<string, Table>>;
  /** A field that must be given (no default). */
  readonly required?: true;
  /** The strings an enum (or a union's shorthand) accepts. */
  readonly values?: readonly string[];
  /** Type only: what a user gives. Never set. */
  readonly given?: G;
}

/** A group of options by name, in the order they resolve. */
export type Table = Readonly<Record<string, Field<unknown, unknown>>>;

/** What a table resolves to. */
export type ResolvedOf<T extends Table> = { readonly [K in keyof T]: T[K] extends Field<unknown, infer R> ? R : never };

/** The fields of a table that must be given. */
type RequiredKeys<T extends Table> = { [K in keyof T]: T[K] extends { readonly required: true } ? K : never }[keyof T];

/** What a user may give for a table: every field optional but the required ones. */
export type GivenOf<T extends Table> = { [K in Exclude<keyof T, RequiredKeys<T>>]?: T[K] extends Field<infer G, unknown> ? G : never } & {
  [K in RequiredKeys<T>]: T[K] extends Field<infer G, unknown> ? G : never;
};

/** A default computed from the fields resolved before it in the same group. */
export type Derive<R> = (siblings: Siblings) => R;

const show = (value: unknown): string => (value === undefined ? 'undefined' : JSON.stringify(value));
const quoted = (values: readonly string[]): string => values.map((v) => `'${v}'`).join(', ');
const orDefault = <R>(d: R | Derive<R>, siblings: Siblings): R => (typeof d === 'function' ? (d as Derive<R>)(siblings) : d);
const docOf = (d: unknown, given: string | undefined): string => given ?? (d === null ? 'none' : typeof d === 'string' ? `'${d}'` : JSON.stringify(d));

interface IntSpec {
  readonly min: number;
  readonly max?: number;
  /** Literal strings also accepted (`'in-thread'`). */
  readonly or?: readonly string[];
  readonly doc: string;
  readonly defaultDoc?: string;
}

/** An integer in `[min, max]` or one of the literal strings in `or`; null when not given. */
export function int<S extends string>(spec: IntSpec & { readonly or: readonly S[]; readonly default: null }): Field<number | S, number | S | null>;
/** An integer option in `[min, max]`. */
export function int(spec: IntSpec & { readonly default: number | Derive<number> }): Field<number, number>;
/** An integer option in `[min, max]` that is null when not given (the default is decided elsewhere). */
export function int(spec: IntSpec & { readonly default: null }): Field<number, number | null>;
export function int(spec: IntSpec & { readonly default: number | null | Derive<number> }): Field<unknown, unknown> {
  const max = spec.max ?? Number.MAX_SAFE_INTEGER;
  const range = spec.max === undefined ? `>= ${spec.min}` : `between ${spec.min} and ${spec.max}`;
  const also = spec.or === undefined ? '' : ` or ${quoted(spec.or)}`;
  return {
    kind: 'int',
    doc: spec.doc,
    defaultDoc: docOf(spec.default, spec.defaultDoc),
    ...(spec.or === undefined ? {} : { values: spec.or }),
    resolve: (value, path, siblings) => {
      if (value === undefined) return orDefault(spec.default, siblings);
      if (typeof value === 'string' && spec.or?.includes(value)) return value;
      if (typeof value !== 'number' || !Number.isInteger(value) || value < spec.min || value > max) {
        throw new ConfigError(path, `must be an integer ${range}${also}, got ${show(value)}`);
      }
      return value;
    },
  };
}

/** A finite number option, at least `min` (or above `above`). */
export function num(spec: { readonly min?: number; readonly above?: number; readonly default: number; readonly doc: string }): Field<number, number> {
  const bound = spec.above === undefined ? `>= ${spec.min ?? 0}` : `> ${spec.above}`;
  const ok = (n: number): boolean => Number.isFinite(n) && (spec.above === undefined ? n >= (spec.min ?? 0) : n > spec.above);
  return {
    kind: 'number',
    doc: spec.doc,
    defaultDoc: String(spec.default),
    resolve: (value, path) => {
      if (value === undefined) return spec.default;
      if (typeof value !== 'number' || !ok(value)) throw new ConfigError(path, `must be a number ${bound}, got ${show(value)}`);
      return value;
    },
  };
}

/** A true/false option. */
export function bool(spec: { readonly default: boolean | Derive<boolean>; readonly doc: string; readonly defaultDoc?: string }): Field<boolean, boolean> {
  return {
    kind: 'boolean',
    doc: spec.doc,
    defaultDoc: docOf(spec.default, spec.defaultDoc),
    resolve: (value, path, siblings) => {
      if (value === undefined) return orDefault(spec.default, siblings);
      if (typeof value !== 'boolean') throw new ConfigError(path, `must be true or false, got ${show(value)}`);
      return value;
    },
  };
}

/** One of a few strings. */
export function oneOf<S extends string>(values: readonly S[], spec: { readonly default: S; readonly doc: string }): Field<S, S> {
  return {
    kind: 'enum',
    doc: spec.doc,
    defaultDoc: `'${spec.default}'`,
    values,
    resolve: (value, path) => {
      if (value === undefined) return spec.default;
      if (typeof value !== 'string' || !values.includes(value as S)) throw new ConfigError(path, `must be one of ${quoted(values)}, got ${show(value)}`);
      return value as S;
    },
  };
}

/**
 * A non-empty string option: `expect` says what it must be (`a directory path`), `valid` refines
 * the check, `parse` turns it into what the option resolves to (may throw ConfigError).
 */
interface TextSpec {
  readonly expect: string;
  readonly valid?: (s: string) => boolean;
  readonly parse?: (s: string, path: string) => string;
  readonly doc: string;
}

/** A string option that must be given. */
export function text(spec: TextSpec & { readonly required: true }): Field<string, string> & { readonly required: true };
/** A string option that is null when not given. */
export function text(spec: TextSpec & { readonly defaultDoc: string }): Field<string, string | null>;
/** A string option with a default. */
export function text(spec: TextSpec & { readonly default: string }): Field<string, string>;
export function text(spec: TextSpec & { readonly default?: string; readonly defaultDoc?: string; readonly required?: true }): Field<string, string | null> {
  const fallback = spec.default ?? null;
  const parse = (s: string, path: string): string => (spec.parse === undefined ? s : spec.parse(s, path));
  return {
    kind: 'text',
    doc: spec.doc,
    defaultDoc: spec.required === true ? 'required' : docOf(fallback, spec.defaultDoc),
    ...(spec.required === true ? { required: true } : {}),
    resolve: (value, path) => {
      if (value === undefined && spec.required === true) throw new ConfigError(path, `is required: ${spec.expect}`);
      if (value === undefined) return fallback === null ? null : parse(fallback, path);
      if (typeof value !== 'string' || value.length === 0 || (spec.valid !== undefined && !spec.valid(value))) {
        throw new ConfigError(path, `must be ${spec.expect}, got ${show(value)}`);
      }
      return parse(value, path);
    },
  };
}

/** `path.key`, or `key` at the top. */
export const child = (path: string, key: string): string => (path === '' ? key : `${path}.${key}`);

/** Refuses keys of `given` that `known` does not list, naming the key and listing the known ones. */
export function rejectUnknown(given: object, known: readonly string[], path: string): void {
  for (const key of Object.keys(given)) {
    if (!known.includes(key)) throw new ConfigError(child(path, key), `unknown option (known: ${known.join(', ')})`);
  }
}

/** `value` as an object to read fields from, or a ConfigError naming `path` (`options` at the top). */
export function objectAt(value: unknown, path: string, expect = 'an object'): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ConfigError(path === '' ? 'options' : path, `must be ${expect}`);
  return value as Record<string, unknown>;
}

/** Resolves every field of `table` from `given` (unknown keys refused), in table order. */
export function resolveTable<T extends Table>(table: T, given: Record<string, unknown>, path: string): ResolvedOf<T> {
  rejectUnknown(given, Object.keys(table), path);
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(table)) out[key] = field.resolve(given[key], child(path, key), out);
  return out as ResolvedOf<T>;
}

/**
 * A nested object of options. `check` sees the resolved fields and what was given (cross-field
 * rules); `build` turns the resolved fields into the type the engine uses.
 */
export function group<T extends Table, R = ResolvedOf<T>>(
  fields: T,
  spec: {
    readonly doc: string;
    readonly check?: (resolved: ResolvedOf<T>, path: string, given: Record<string, unknown>) => void;
    readonly build?: (resolved: ResolvedOf<T>) => R;
  },
): Field<GivenOf<T>, R> {
  return {
    kind: 'group',
    doc: spec.doc,
    defaultDoc: 'each field its default',
    fields,
    resolve: (value, path) => {
      const given = value === undefined ? {} : objectAt(value, path);
      const resolved = resolveTable(fields, given, path);
      spec.check?.(resolved, path, given);
      return spec.build === undefined ? (resolved as unknown as R) : spec.build(resolved);
    },
  };
}

/** The resolved members of a union: `{ type: M } & fields of M`, one per member. */
export type ResolvedUnion<M extends Readonly<Record<string, Table>>> = {
  [K in keyof M & string]: { readonly type: K } & ResolvedOf<M[K]>;
}[keyof M & string];

/** What a user may give for a union: one member's fields with its `type`. */
export type GivenUnion<M extends Readonly<Record<string, Table>>> = {
  [K in keyof M & string]: { type: K } & GivenOf<M[K]>;
}[keyof M & string];

/**
 * A discriminated union on `type`: each member a table of its own fields. With `strings`, a bare
 * member name stands for `{ type: name }` (`stateBackend: 'heap'`).
 */
export function union<M extends Readonly<Record<string, Table>>, S extends boolean = false>(
  members: M,
  spec: {
    readonly default: GivenUnion<M>;
    readonly strings?: S;
    readonly doc: string;
    readonly defaultDoc?: string;
    /** Cross-field rules of a member. */
    readonly check?: (resolved: ResolvedUnion<M>, path: string) => void;
  },
): Field<S extends true ? GivenUnion<M> | (keyof M & string) : GivenUnion<M>, ResolvedUnion<M>> {
  const names = Object.keys(members);
  const shape = spec.strings === true ? `${quoted(names)} or an object with a type` : 'an object with a type';
  return {
    kind: 'union',
    doc: spec.doc,
    defaultDoc: spec.defaultDoc ?? JSON.stringify(spec.default),
    members,
    ...(spec.strings === true ? { values: names } : {}),
    resolve: (value, path) => {
      const given = value === undefined ? spec.default : value;
      let type: string;
      let fields: Record<string, unknown> = {};
      if (typeof given === 'string' && spec.strings === true) {
        if (!names.includes(given)) throw new ConfigError(path, `must be one of ${shape}, got ${show(given)}`);
        type = given;
      } else {
        const { type: t, ...rest } = objectAt(given, path, shape);
        if (typeof t !== 'string' || !names.includes(t)) throw new ConfigError(child(path, 'type'), `must be one of ${quoted(names)}, got ${show(t)}`);
        rejectUnknown(rest, ['type', ...Object.keys(members[t]!)], path);
        type = t;
        fields = rest;
      }
      const resolved = { type, ...resolveTable(members[type]!, fields, path) } as ResolvedUnion<M>;
      spec.check?.(resolved, path);
      return resolved;
    },
  };
}
