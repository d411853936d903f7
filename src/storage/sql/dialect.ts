/**
 * What differs between SQLite and PostgreSQL, as a table: column types, how a value is written to and read from a
 * column, and the few SQL fragments the shared queries (queries.ts) leave open. The DDL of each schema version and the
 * row <-> record mappers are derived from the table specs (tables.ts) with it.
 */
import { history, type Column, type ColumnType, type Step, type Table, type TableSpec } from './tables.js';

export type Row = Record<string, unknown>;

interface Codec {
  write(value: unknown): unknown;
  read(value: unknown): unknown;
}

export interface Dialect {
  types: Record<ColumnType, string>;
  codecs: Record<ColumnType, Codec>;
  /** `<column> <inList(param)>`: the column's value is one of a list parameter's, made by `list`. */
  inList(param: string): string;
  list(values: readonly string[]): unknown;
  /** Ends a SELECT whose rows the transaction changes next: `lock` waits for other writers, `skipLocked` passes over their rows. */
  lock: string;
  skipLocked: string;
  /** How many versions of the history a new database's first version covers. */
  firstVersion: number;
}

const same: Codec = { write: (value) => value, read: (value) => value };
/** Absent values are NULL; JSON goes as text (pg would turn a JS array into a PostgreSQL array). */
const writeJson = (value: unknown): string | null => (value === null || value === undefined ? null : JSON.stringify(value));

/** Times are the callers' ISO-8601 strings (all from toISOString), which order as text in time order. */
export const sqlite: Dialect = {
  types: { id: 'TEXT', text: 'TEXT', integer: 'INTEGER', bigint: 'INTEGER', real: 'REAL', json: 'TEXT', time: 'TEXT', boolean: 'INTEGER' },
  codecs: {
    id: same,
    text: same,
    integer: same,
    bigint: same,
    real: same,
    json: { write: writeJson, read: (value) => (value === null ? null : JSON.parse(value as string)) },
    time: same,
    boolean: { write: (value) => (value ? 1 : 0), read: (value) => value === 1 },
  },
  inList: (param) => `IN (SELECT value FROM json_each(${param}))`,
  list: (values) => JSON.stringify(values),
  // A write transaction (BEGIN IMMEDIATE) is the only writer until it ends: the rows it reads are already its own.
  lock: '',
  skipLocked: '',
  firstVersion: 1,
};

/**
 * JSON columns are `json`, not `jsonb`: `json` keeps the text as written, so a job's result body comes back with its keys
 * in the order the synchronous call renders them (jsonb reorders keys), as SQLite's text does; nothing queries inside
 * them. Times are `timestamptz` (ordered and compared as times), read back as ISO-8601 strings; every time comes from the
 * caller at millisecond precision, so the round trip is exact. Ids compare byte-wise (C), as in SQLite.
 */
export const postgres: Dialect = {
  types: {
    id: 'TEXT COLLATE "C"',
    text: 'TEXT',
    integer: 'INTEGER',
    bigint: 'BIGINT',
    real: 'DOUBLE PRECISION',
    json: 'JSON',
    time: 'TIMESTAMPTZ',
    boolean: 'BOOLEAN',
  },
  codecs: {
    id: same,
    text: same,
    integer: same,
    // BIGINT arrives as a string (it may exceed 2^53); file sizes never do.
    bigint: { write: (value) => value, read: (value) => (value === null ? null : Number(value)) },
    real: same,
    json: { write: writeJson, read: (value) => value },
    time: { write: (value) => value, read: (value) => (value === null ? null : (value as Date).toISOString()) },
    boolean: same,
  },
  inList: (param) => `= ANY(CAST(${param} AS TEXT[]))`,
  list: (values) => [...values],
  lock: ' FOR UPDATE',
  // A row another transaction is taking right now is passed over, so two claimers never get the same one.
  skipLocked: ' FOR UPDATE SKIP LOCKED',
  // PostgreSQL support came with version 4: a new database starts with the tables as they stood then.
  firstVersion: 4,
};

/** A parameter given the SQL type of a column type, where the query alone does not tell PostgreSQL its type. */
export const cast = (dialect: Dialect, param: string, type: Exclude<ColumnType, 'id'>): string =>
  `CAST(${param} AS ${dialect.types[type]})`;

export function toRow<R>(dialect: Dialect, table: Table<R>, record: R): Row {
  const row: Row = {};
  for (const [field, column] of Object.entries<Column>(table.columns)) {
    row[column.name] = dialect.codecs[column.type].write(record[field as keyof R]);
  }
  return row;
}

export function fromRow<R>(dialect: Dialect, table: Table<R>, row: Row): R {
  const record: Row = {};
  for (const [field, column] of Object.entries<Column>(table.columns)) {
    record[field] = dialect.codecs[column.type].read(row[column.name]);
  }
  return record as R;
}

export interface Migration {
  statements: string[];
  /** Columns just added whose existing rows each get a value of their own. */
  backfills: Array<{ table: string; column: string; value: () => string }>;
}

const definition = (dialect: Dialect, column: Column): string =>
  [
    column.name,
    dialect.types[column.type],
    column.type === 'id' ? 'PRIMARY KEY' : column.nullable ? '' : 'NOT NULL',
    column.unique ? 'UNIQUE' : '',
    column.default === undefined ? '' : `DEFAULT '${column.default.replaceAll("'", "''")}'`,
  ]
    .filter(Boolean)
    .join(' ');

/** The fields that history[index] and the versions after it add to a table. */
const addedFrom = (index: number, table: TableSpec): Set<string> =>
  new Set(
    history
      .slice(index)
      .flat()
      .flatMap((step) => ('addColumn' in step && step.table === table ? step.addColumn : [])),
  );

function createTable(dialect: Dialect, table: TableSpec, later: Set<string>): string[] {
  const columns = Object.entries(table.columns).filter(([field]) => !later.has(field));
  return [
    `CREATE TABLE ${table.name} (${columns.map(([, column]) => definition(dialect, column)).join(', ')})`,
    ...Object.entries(table.indexes).map(
      ([name, fields]) => `CREATE INDEX ${name} ON ${table.name} (${fields.map((field) => table.columns[field]!.name).join(', ')})`,
    ),
  ];
}

/** The statements of steps taken at history[index]: a table created then gets the columns it had then. */
function apply(dialect: Dialect, steps: Step[], index: number): Migration {
  const migration: Migration = { statements: [], backfills: [] };
  for (const step of steps) {
    if ('create' in step) {
      migration.statements.push(...createTable(dialect, step.create, addedFrom(index + 1, step.create)));
      continue;
    }
    const column = step.table.columns[step.addColumn]!;
    // A NOT NULL column needs a default for the rows already there; a backfill replaces it.
    const placeholder = step.backfill && column.default === undefined ? " DEFAULT ''" : '';
    migration.statements.push(`ALTER TABLE ${step.table.name} ADD COLUMN ${definition(dialect, column)}${placeholder}`);
    if (step.backfill) migration.backfills.push({ table: step.table.name, column: column.name, value: step.backfill });
  }
  return migration;
}

/** The dialect's schema versions in order: a database at version v has applied the first v. */
export function migrations(dialect: Dialect): Migration[] {
  const first = history.slice(0, dialect.firstVersion).flatMap((steps) => steps.filter((step) => 'create' in step));
  const later = history.slice(dialect.firstVersion).map((steps, index) => apply(dialect, steps, dialect.firstVersion + index));
  return [apply(dialect, first, dialect.firstVersion - 1), ...later];
}
