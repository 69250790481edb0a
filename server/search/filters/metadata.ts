// Conditions on a key of the chunk's metadata (`metadata.a.b`), which holds whatever JSON the owner gave.
// A value that is a JSON array matches when any of its elements does (users filter on lists of tags
// kept in metadata); a missing key, or a value of the wrong type, simply does not match: the metadata
// of one chunk can never make a filter fail for the others.
import type { FieldKind } from './field.js';
import { all, any, COMPARISONS, sql, trusted, type Sql } from './sql.js';
import { bounds, fail, matchValues, readInstant, readNumber } from './values.js';

// Bound as parameters (the SQL text may not contain `?`), and checked before any cast so that no
// stored value can raise a cast error. Lengths are capped so `numeric` never overflows.
const NUMERIC_TEXT = String.raw`^\s*[-+]?(\d{1,100}(\.\d{0,100})?|\.\d{1,100})([eE][-+]?\d{1,3})?\s*$`;
const ISO_DATE_TIME = String.raw`^\d{4}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?([Zz]|[+-]\d{2}(:?\d{2})?)?)?$`;
const WITH_ZONE = String.raw`\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?([Zz]|[+-]\d{2}(:?\d{2})?)$`;

const element = trusted('f_e.v');
const text = sql`(${element} #>> '{}')`;

/** The element as a number: a JSON number, or a string holding one; NULL otherwise. */
const asNumber = sql`(case when jsonb_typeof(${element}) = 'number' then ${element}::numeric
  when jsonb_typeof(${element}) = 'string' and ${text} ~ ${NUMERIC_TEXT} then ${text}::numeric end)`;

/** The element as a UTC wall time: an ISO 8601 string (zone-less = UTC) that is a real date; NULL otherwise. */
const asTime = sql`(case when jsonb_typeof(${element}) = 'string' and ${text} ~ ${ISO_DATE_TIME} and pg_input_is_valid(${text}, 'timestamptz')
  then case when ${text} ~ ${WITH_ZONE} then (${text}::timestamptz at time zone 'UTC') else ${text}::timestamp end end)`;

export const metadataKey = (keys: string[]): FieldKind => ({
  operators: ['match_any', 'match_all', 'range', 'date_range', 'boolean'],
  build: (operator, condition, context) => {
    const path = `${context.path}.${operator}`;
    // The key path is a bound text[]: keys are never spliced into the SQL. A value that is not an
    // array is taken as an array of one, so scalars and lists are tested alike.
    const someElement = (predicate: Sql) => sql`exists (select 1 from (select ${context.column('metadata')} #> ${keys}::text[]) f_m(v)
      cross join lateral jsonb_array_elements(case when jsonb_typeof(f_m.v) = 'array' then f_m.v else jsonb_build_array(f_m.v) end) f_e(v)
      where ${predicate})`;

    switch (operator) {
      case 'match_any':
      case 'match_all': {
        // Strings compare with the element's text (so "5" matches 5 and "true" matches true); numbers
        // compare numerically (so 5 matches 5, 5.0 and "5").
        const matches = (values: (string | number)[]) => {
          const texts = values.filter((v): v is string => typeof v === 'string');
          const numbers = values.filter((v): v is number => typeof v === 'number');
          return any([
            ...(texts.length ? [sql`${text} = any(${texts}::text[])`] : []),
            ...(numbers.length ? [sql`${asNumber} = any(${numbers}::numeric[])`] : []),
          ]);
        };
        const values = matchValues(condition[operator], path);
        return operator === 'match_any' ? someElement(matches(values)) : all(values.map((v) => someElement(matches([v]))));
      }
      case 'range':
        return someElement(
          all(bounds(condition.range, path, readNumber).map(({ bound, value }) => sql`${asNumber} ${trusted(COMPARISONS[bound])} ${value}::numeric`)),
        );
      case 'date_range':
        return someElement(
          all(
            bounds(condition.date_range, path, readInstant).map(
              ({ bound, value }) => sql`${asTime} ${trusted(COMPARISONS[bound])} (${value}::timestamptz at time zone 'UTC')`,
            ),
          ),
        );
      case 'boolean':
        if (typeof condition.boolean !== 'boolean') fail(path, 'must be true or false');
        return someElement(sql`${element} = ${JSON.stringify(condition.boolean)}::jsonb`);
      default:
        throw new Error(`metadata has no ${operator} operator`);
    }
  },
});
