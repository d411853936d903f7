/**
 * Scale-out store: PostgreSQL for records, shared by every API and worker process; blobs elsewhere (S3 or a shared
 * directory). Row locks (the dialect's FOR UPDATE SKIP LOCKED) make claims exclusive across processes.
 */
import pg from 'pg';
import type { BlobStore, Store } from '../store.js';
import { migrations, postgres } from './dialect.js';
import { sqlStore, type Params, type Queries } from './queries.js';

/** Held while migrating, so that processes starting together apply each migration once. */
const migrationLockId = 0x766f7864;

/** A statement's `@name` parameters as pg's positional `$n` (the queries have no `@` elsewhere), worked out once. */
const positional = new Map<string, { text: string; names: string[] }>();
function compile(sql: string): { text: string; names: string[] } {
  let compiled = positional.get(sql);
  if (!compiled) {
    const names: string[] = [];
    const text = sql.replace(/@(\w+)/g, (_, name: string) => `$${names.includes(name) ? names.indexOf(name) + 1 : names.push(name)}`);
    compiled = { text, names };
    positional.set(sql, compiled);
  }
  return compiled;
}

function queries(connection: Pick<pg.PoolClient, 'query'>): Queries {
  const run = (sql: string, params: Params = {}) => {
    const { text, names } = compile(sql);
    return connection.query(
      text,
      names.map((name) => params[name]),
    );
  };
  return {
    rows: async (sql, params) => (await run(sql, params)).rows,
    changes: async (sql, params) => (await run(sql, params)).rowCount ?? 0,
  };
}

async function transaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    // A connection that cannot even roll back is dropped from the pool instead of being reused mid-transaction.
    await client.query('ROLLBACK').catch(() => (broken = true));
    throw error;
  } finally {
    client.release(broken);
  }
}

/** Brings the schema to the latest version; voxd_schema holds the number of versions applied. */
async function migrate(pool: pg.Pool): Promise<void> {
  await transaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1)', [migrationLockId]);
    await client.query('CREATE TABLE IF NOT EXISTS voxd_schema (version INTEGER NOT NULL)');
    await client.query('INSERT INTO voxd_schema (version) SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM voxd_schema)');
    const current = (await client.query<{ version: number }>('SELECT version FROM voxd_schema')).rows[0]!.version;
    const versions = migrations(postgres);
    for (let version = current; version < versions.length; version++) {
      const { statements, backfills } = versions[version]!;
      for (const statement of statements) await client.query(statement);
      for (const { table, column, value } of backfills) {
        for (const { id } of (await client.query<{ id: string }>(`SELECT id FROM ${table}`)).rows) {
          await client.query(`UPDATE ${table} SET ${column} = $1 WHERE id = $2`, [value(), id]);
        }
      }
      await client.query('UPDATE voxd_schema SET version = $1', [version + 1]);
    }
  });
}

export async function openPostgresStore(databaseUrl: string, blobs: BlobStore): Promise<Store> {
  const pool = new pg.Pool({ connectionString: databaseUrl });
  // An idle connection the server dropped (restart, failover) is discarded by the pool; the next query opens a new one.
  pool.on('error', () => undefined);
  try {
    await migrate(pool);
  } catch (error) {
    await pool.end();
    throw error;
  }
  const client = {
    ...queries(pool),
    transaction: <T>(work: (tx: Queries) => Promise<T>) => transaction(pool, (connection) => work(queries(connection))),
  };
  return sqlStore(client, postgres, blobs, () => pool.end());
}
