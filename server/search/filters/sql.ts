// SQL fragments with their bound values, composed before they reach knex as one `whereRaw`.

/** A piece of SQL whose every user value is a `?` placeholder with its value in `values`. */
export interface Sql {
  readonly text: string;
  readonly values: readonly unknown[];
}

const isSql = (part: unknown): part is Sql =>
  typeof part === 'object' && part !== null && 'text' in part && 'values' in part && Array.isArray((part as Sql).values);

/**
 * Tagged template: interpolated `Sql` fragments are inlined, anything else becomes a bound parameter.
 * The literal text may not contain `?` (knex would take it for a placeholder), so jsonb's `?`
 * operators are never used here: the filters use `@>`, `&&`, `#>` and `= any(...)` instead.
 */
export function sql(strings: TemplateStringsArray, ...parts: unknown[]): Sql {
  let text = strings[0];
  const values: unknown[] = [];
  parts.forEach((part, i) => {
    if (isSql(part)) {
      text += part.text;
      values.push(...part.values);
    } else {
      text += '?';
      values.push(part);
    }
    text += strings[i + 1];
  });
  if (strings.some((s) => s.includes('?'))) throw new Error(`a literal "?" in filter SQL would be read as a placeholder: ${text}`);
  return { text, values };
}

/** Trusted text (column names, operators from a fixed table), never a user value. */
export const trusted = (text: string): Sql => ({ text, values: [] });

export function join(parts: readonly Sql[], separator: string): Sql {
  return { text: parts.map((p) => p.text).join(separator), values: parts.flatMap((p) => p.values) };
}

/** All of the parts (`true` when there are none). */
export const all = (parts: readonly Sql[]): Sql => combine(parts, ' and ', 'true');

/** At least one of the parts (`false` when there are none). */
export const any = (parts: readonly Sql[]): Sql => combine(parts, ' or ', 'false');

// Each part in parentheses when there are several, so that no operator precedence can regroup them.
const combine = (parts: readonly Sql[], operator: string, empty: string): Sql =>
  parts.length === 0
    ? trusted(empty)
    : parts.length === 1
      ? parts[0]
      : sql`(${join(
          parts.map((part) => sql`(${part})`),
          operator,
        )})`;

/** The comparison operators of `range` and `date_range`, as SQL. */
export const COMPARISONS = { gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;
export type Bound = keyof typeof COMPARISONS;
