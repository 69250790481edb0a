// A generic analytics query (T.AnalyticsQuery) checked and written as one SQL statement with
// bindings. The SQL text is made only of fixed fragments written here and of placeholders: every
// name from the body is checked against the allow-lists (tables.ts, the functions and operators
// below) or, for output aliases, against a plain-identifier pattern, and is bound as an identifier;
// every value is bound as a value. Each table is read through a sub-select of its allowed columns
// and the caller's dataset, so joins and the common table expression see only that dataset.
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { badRequest } from '../../errors.js';
import { TABLES } from './tables.js';

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 10_000;

/** SQL text with `?` (value) and `??` (identifier) placeholders, and their bindings in order. */
export interface Sql {
  text: string;
  bindings: unknown[];
}

const sql = (text: string, ...bindings: unknown[]): Sql => ({ text, bindings });

function join(parts: Sql[], separator: string): Sql {
  return { text: parts.map((p) => p.text).join(separator), bindings: parts.flatMap((p) => p.bindings) };
}

function concat(...parts: Sql[]): Sql {
  return join(parts, '');
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** A name from the body used as an alias: a plain identifier, else 400. */
function identifier(name: string, field: string): string {
  if (!IDENTIFIER.test(name)) throw badRequest(`${field}: "${name}" is not a plain name (letters, digits and _, not starting with a digit)`);
  return name;
}

const AGGREGATES: Record<T.AggregationType, string> = { COUNT: 'count', SUM: 'sum', AVG: 'avg', MIN: 'min', MAX: 'max' };

const COMPARISONS: Record<string, string> = {
  '=': '=',
  '!=': '<>',
  '<>': '<>',
  '>': '>',
  '<': '<',
  '>=': '>=',
  '<=': '<=',
  like: 'like',
  'not like': 'not like',
};

/** CAST's target types, by the reference's (ClickHouse) names. */
const CAST_TYPES: Record<string, string> = {
  string: 'text',
  int32: 'integer',
  int64: 'bigint',
  float32: 'real',
  float64: 'double precision',
  bool: 'boolean',
  date: 'date',
  datetime: 'timestamptz',
};

const JOINS: Record<Exclude<T.JoinType, 'anti'>, string> = {
  inner: 'inner join',
  left: 'left join',
  right: 'right join',
  full: 'full join',
  cross: 'cross join',
};

/** A table of the query as its statement names it, and the columns it shows. */
interface Source {
  name: string;
  columns: Set<string>;
  /** How the FROM or JOIN clause reads it. */
  from: Sql;
}

/** What names mean in one SELECT: its tables, and (for GROUP BY, ORDER BY) its output names. */
class Names {
  readonly outputs = new Set<string>();
  constructor(readonly sources: Source[]) {}

  /** A column of the tables, written qualified; 400 when unknown or ambiguous. */
  column(name: string, field: string): Sql {
    const dot = name.indexOf('.');
    if (dot >= 0) {
      const table = name.slice(0, dot);
      const column = name.slice(dot + 1);
      const source = this.sources.find((s) => s.name === table);
      if (!source) throw badRequest(`${field}: "${name}" names table "${table}", which the query does not read`);
      if (!source.columns.has(column)) throw badRequest(`${field}: table "${table}" has no column "${column}"`);
      return sql('??', `${source.name}.${column}`);
    }
    const owners = this.sources.filter((s) => s.columns.has(name));
    if (owners.length === 0) throw badRequest(`${field}: no table of the query has a column "${name}"`);
    if (owners.length > 1) throw badRequest(`${field}: "${name}" is a column of ${owners.map((s) => s.name).join(' and ')}: name it as table.${name}`);
    return sql('??', `${owners[0].name}.${name}`);
  }

  /** A column, or an output name (ORDER BY prefers output names, GROUP BY columns, as PostgreSQL does). */
  columnOrOutput(name: string, field: string, prefer: 'output' | 'column'): Sql {
    const isOutput = this.outputs.has(name);
    if (isOutput && (prefer === 'output' || !this.sources.some((s) => s.columns.has(name)))) return sql('??', name);
    return this.column(name, field);
  }
}

/** Compiles the query for the dataset. */
export function compile(query: T.AnalyticsQuery, datasetId: string): Sql {
  const ctes = new Map<string, Set<string>>();
  let prefix = sql('');
  if (query.cte_query) {
    const alias = identifier(query.cte_query.alias, 'cte_query.alias');
    if (TABLES[alias]) throw badRequest(`cte_query.alias: "${alias}" is the name of a table; choose another`);
    const sub = select(query.cte_query.query, datasetId, ctes, 'cte_query.query');
    ctes.set(alias, sub.outputs);
    prefix = concat(sql('with ?? as (', alias), sub.sql, sql(') '));
  }
  return concat(prefix, select(query, datasetId, ctes, '').sql);
}

/** One SELECT, and the names of its output columns. */
function select(query: T.SubQuery, datasetId: string, ctes: Map<string, Set<string>>, at: string): { sql: Sql; outputs: Set<string> } {
  const field = (name: string) => (at ? `${at}.${name}` : name);
  const main = source(query.table, datasetId, ctes, field('table'));
  const sources = [main];
  const joins: Sql[] = [];
  const antiJoins: Sql[] = [];
  for (const [i, clause] of (query.joins ?? []).entries()) {
    const joined = source(clause.table, datasetId, ctes, field(`joins[${i}].table`));
    if (sources.some((s) => s.name === joined.name)) throw badRequest(`${field(`joins[${i}].table`)}: "${joined.name}" is read twice by the query`);
    const condition = joinCondition(clause.condition, new Names([...sources, joined]), joined, field(`joins[${i}].condition`));
    if (clause.join_type === 'anti') {
      // The rows with no match: the joined table is only seen by the condition.
      antiJoins.push(concat(sql('not exists (select from '), joined.from, sql(' where '), condition, sql(')')));
      continue;
    }
    const type = clause.join_type ?? 'inner';
    joins.push(concat(sql(` ${JOINS[type]} `), joined.from, type === 'cross' ? sql('') : concat(sql(' on '), condition)));
    sources.push(joined);
  }
  const names = new Names(sources);

  const selected: Sql[] = [];
  const outputs = new Set<string>();
  const output = (name: string, expression: Sql) => {
    outputs.add(name);
    names.outputs.add(name);
    selected.push(concat(expression, sql(' as ??', name)));
  };
  for (const [i, column] of query.columns.entries()) {
    const f = field(`columns[${i}]`);
    if (column.name === '*' && !column.aggregation) {
      if (column.alias !== undefined) throw badRequest(`${f}.alias: * (every column) cannot be renamed`);
      for (const s of sources) for (const c of s.columns) output(c, sql('??', `${s.name}.${c}`));
      continue;
    }
    const value = columnValue(column, names, f);
    output(column.alias !== undefined ? identifier(column.alias, `${f}.alias`) : defaultName(column), value);
  }
  for (const [i, expression] of (query.expressions ?? []).entries()) {
    const f = field(`expressions[${i}]`);
    const value = expressionSql(expression.expression, names, `${f}.expression`);
    output(expression.alias !== undefined ? identifier(expression.alias, `${f}.alias`) : `expr_${i}`, value);
  }
  if (selected.length === 0) for (const s of sources) for (const c of s.columns) output(c, sql('??', `${s.name}.${c}`));

  const parts: Sql[] = [sql('select '), join(selected, ', '), sql(' from '), main.from, ...joins];
  const conditions = [...(query.filter_conditions ?? []).map((c, i) => filter(c, names, field(`filter_conditions[${i}]`))), ...antiJoins];
  if (conditions.length) parts.push(sql(' where '), join(conditions, ' and '));
  if (query.group_by?.columns.length) {
    const f = field('group_by');
    parts.push(
      sql(' group by '),
      join(
        query.group_by.columns.map((c, i) => names.columnOrOutput(c, `${f}.columns[${i}]`, 'column')),
        ', ',
      ),
    );
    if (query.group_by.having) parts.push(sql(' having '), having(query.group_by.having, names, `${f}.having`));
  } else if (query.group_by?.having) throw badRequest(`${field('group_by.having')}: having needs columns to group by`);
  if (query.order_by?.columns.length) {
    const f = field('order_by');
    const direction = query.order_by.direction === 'asc' ? ' asc' : ' desc';
    parts.push(
      sql(' order by '),
      join(
        query.order_by.columns.map((c, i) => concat(names.columnOrOutput(c, `${f}.columns[${i}]`, 'output'), sql(direction))),
        ', ',
      ),
    );
  }
  const limit = query.limit ?? DEFAULT_LIMIT;
  if (limit === 0 || limit > MAX_LIMIT) throw badRequest(`${field('limit')}: from 1 to ${MAX_LIMIT} rows, not ${limit}`);
  parts.push(sql(' limit ?', limit));
  if (query.offset) parts.push(sql(' offset ?', query.offset));
  return { sql: concat(...parts), outputs };
}

/** A table of the body: one of TABLES read for the dataset, or the common table expression. */
function source(table: T.TableName, datasetId: string, ctes: Map<string, Set<string>>, field: string): Source {
  const name = typeof table === 'string' ? table : table.Custom;
  const cte = ctes.get(name);
  if (cte) return { name, columns: cte, from: sql('??', name) };
  const known = TABLES[name];
  if (!known) {
    const what = typeof table === 'string' ? `table "${name}" is not kept by this service` : `"${name}" is neither a table nor the query's cte_query.alias`;
    throw badRequest(`${field}: ${what}; the tables are ${Object.keys(TABLES).join(', ')}`);
  }
  const shown = Object.entries(known.columns).map(([as, column]) => sql('?? as ??', `t.${column}`, as));
  const scoped = known.datasetOf
    ? sql(
        ' from ?? as t join ?? as p on ?? = ?? where ?? = ?',
        known.table,
        known.datasetOf.table,
        'p.id',
        `t.${known.datasetOf.key}`,
        'p.dataset_id',
        datasetId,
      )
    : sql(' from ?? as t where ?? = ?', known.table, 't.dataset_id', datasetId);
  return {
    name,
    columns: new Set(Object.keys(known.columns)),
    from: concat(sql('(select '), join(shown, ', '), scoped, sql(') as ??', name)),
  };
}

function joinCondition(condition: T.JoinCondition, names: Names, joined: Source, field: string): Sql {
  if (condition.type === 'column_equals')
    return concat(names.column(condition.left_column, `${field}.left_column`), sql(' = '), names.column(condition.right_column, `${field}.right_column`));
  // USING: the column on the joined table equals the one on the tables before it.
  const before = new Names(names.sources.filter((s) => s !== joined));
  const only = new Names([joined]);
  return join(
    condition.columns.map((c, i) => concat(before.column(c, `${field}.columns[${i}]`), sql(' = '), only.column(c, `${field}.columns[${i}]`))),
    ' and ',
  );
}

function defaultName(column: T.Column): string {
  const base = column.name === '*' ? 'all' : column.name.slice(column.name.indexOf('.') + 1);
  return column.aggregation ? `${column.aggregation.toLowerCase()}_${base}` : base;
}

function columnValue(column: T.Column, names: Names, field: string): Sql {
  if (!column.aggregation) {
    if (column.distinct) throw badRequest(`${field}.distinct: only with an aggregation`);
    return names.column(column.name, `${field}.name`);
  }
  return aggregate(column.aggregation, column.name, column.distinct ?? false, names, field);
}

function aggregate(fn: T.AggregationType, column: string, distinct: boolean, names: Names, field: string): Sql {
  if (column === '*') {
    if (fn !== 'COUNT' || distinct) throw badRequest(`${field}: * only as COUNT(*)`);
    return sql('count(*)');
  }
  return concat(sql(`${AGGREGATES[fn]}(${distinct ? 'distinct ' : ''}`), names.column(column, `${field}.name`), sql(')'));
}

function expressionSql(expression: T.ExpressionType, names: Names, field: string): Sql {
  switch (expression.type) {
    case 'column':
      return names.column(expression.name, `${field}.name`);
    case 'literal':
      if (Array.isArray(expression.value)) throw badRequest(`${field}.value: a single value, not a list`);
      return sql('?', expression.value);
    case 'raw':
      throw badRequest(`${field}: raw SQL is not accepted; use column, literal and function expressions`);
    case 'function':
      return call(expression.name, expression.args, names, field);
  }
}

function call(name: string, args: T.ExpressionType[], names: Names, field: string): Sql {
  const fn = name.toUpperCase();
  const count = (min: number, max: number) => {
    if (args.length < min || args.length > max)
      throw badRequest(`${field}.args: ${name} takes ${min === max ? min : `${min} to ${max === Infinity ? 'any number of' : max}`} arguments`);
  };
  const argSql = () => args.map((a, i) => expressionSql(a, names, `${field}.args[${i}]`));
  switch (fn) {
    case 'COUNT':
      count(0, 1);
      return args.length ? concat(sql('count('), argSql()[0], sql(')')) : sql('count(*)');
    case 'SUM':
    case 'AVG':
    case 'MIN':
    case 'MAX':
      count(1, 1);
      return concat(sql(`${AGGREGATES[fn]}(`), argSql()[0], sql(')'));
    case 'COALESCE':
      count(1, Infinity);
      return concat(sql('coalesce('), join(argSql(), ', '), sql(')'));
    case 'DATE':
    case 'TODATE':
      count(1, 1);
      // As text: a date is a day, not an instant in some time zone.
      return concat(sql('date('), argSql()[0], sql(')::text'));
    case 'CAST': {
      count(2, 2);
      const target = args[1];
      const type = target.type === 'literal' && typeof target.value === 'string' ? CAST_TYPES[target.value.toLowerCase()] : undefined;
      if (!type) throw badRequest(`${field}.args[1]: the type to cast to, one of ${Object.keys(CAST_TYPES).join(', ')} (as a literal)`);
      return concat(sql('cast('), expressionSql(args[0], names, `${field}.args[0]`), sql(` as ${type})${type === 'date' ? '::text' : ''}`));
    }
    default:
      throw badRequest(`${field}.name: function "${name}" is not allowed; the functions are COUNT, SUM, AVG, MIN, MAX, COALESCE, DATE, toDate and CAST`);
  }
}

/** `lhs operator value`, the value bound. */
function comparison(lhs: Sql, operator: T.FilterOperator, value: T.FilterValue, field: string): Sql {
  switch (operator) {
    case 'is null':
      return concat(lhs, sql(' is null'));
    case 'is not null':
      return concat(lhs, sql(' is not null'));
    case 'in':
    case 'not in': {
      const values = Array.isArray(value) ? value : [value];
      if (values.some(Array.isArray)) throw badRequest(`${field}.value: a list of single values`);
      // An empty list matches nothing (in) or everything (not in).
      if (values.length === 0) return sql(operator === 'in' ? 'false' : 'true');
      return concat(lhs, sql(` ${operator} (${values.map(() => '?').join(', ')})`, ...values));
    }
    default:
      if (Array.isArray(value)) throw badRequest(`${field}.value: a single value for ${operator}`);
      return concat(lhs, sql(` ${COMPARISONS[operator]} ?`, value));
  }
}

/** As the reference: (the condition or any of or_filter) and all of and_filter. */
function filter(condition: T.FilterCondition, names: Names, field: string): Sql {
  let own = comparison(names.column(condition.column, `${field}.column`), condition.operator, condition.value, field);
  if (condition.or_filter?.length)
    own = concat(sql('('), join([own, ...condition.or_filter.map((c, i) => filter(c, names, `${field}.or_filter[${i}]`))], ' or '), sql(')'));
  if (!condition.and_filter?.length) return own;
  return concat(sql('('), join([own, ...condition.and_filter.map((c, i) => filter(c, names, `${field}.and_filter[${i}]`))], ' and '), sql(')'));
}

function having(condition: T.HavingCondition, names: Names, field: string): Sql {
  if (condition.type === 'aggregate')
    return comparison(aggregate(condition.function, condition.column, false, names, field), condition.operator, condition.value, field);
  if (!condition.conditions.length) throw badRequest(`${field}.conditions: at least one condition`);
  return concat(
    sql('('),
    join(
      condition.conditions.map((c, i) => having(c, names, `${field}.conditions[${i}]`)),
      ` ${condition.type} `,
    ),
    sql(')'),
  );
}
