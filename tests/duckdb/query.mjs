// Runs SQL statements with DuckDB and prints the last statement's rows as JSON lines.
// Usage: node query.mjs "SQL" ["SQL" ...]
// BIGINTs print as strings (JSON has no 64-bit integers); DECIMALs, dates and timestamps as text.
import { DuckDBInstance } from '@duckdb/node-api';

const statements = process.argv.slice(2);
if (statements.length === 0) {
  console.error('usage: node query.mjs "SQL" ...');
  process.exit(2);
}
try {
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  let reader = null;
  for (const sql of statements) {
    reader = await conn.runAndReadAll(sql);
  }
  for (const row of reader.getRowObjectsJson()) {
    process.stdout.write(JSON.stringify(row) + '\n');
  }
} catch (e) {
  console.error(`duckdb: ${e.message}`);
  process.exit(1);
}
