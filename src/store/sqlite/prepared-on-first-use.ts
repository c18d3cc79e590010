import type Database from "better-sqlite3";

/**
 * A connection's statements, each prepared on first use and then kept. Opening a store
 * prepared some eighty (leases, journal, waves) where a `quiesce run` uses a handful; that
 * cost it about 4 ms of its start-up (bench/startup.ts). A statement whose SQL is wrong now
 * fails where it is first run, which every statement's tests reach.
 */
export function preparedOnFirstUse<K extends string>(
  makers: Record<K, () => Database.Statement>,
): Record<K, Database.Statement> {
  const statements = {} as Record<K, Database.Statement>;
  for (const name of Object.keys(makers) as K[])
    Object.defineProperty(statements, name, {
      enumerable: true,
      configurable: true,
      get() {
        const statement = makers[name]();
        Object.defineProperty(statements, name, { value: statement, enumerable: true });
        return statement;
      },
    });
  return statements;
}

/** The same, for statements given as SQL text by name. */
export function sqlPreparedOnFirstUse<K extends string>(
  db: Database.Database,
  sql: Record<K, string>,
): Record<K, Database.Statement> {
  const makers = {} as Record<K, () => Database.Statement>;
  for (const name of Object.keys(sql) as K[]) makers[name] = () => db.prepare(sql[name]);
  return preparedOnFirstUse(makers);
}
