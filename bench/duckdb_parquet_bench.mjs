// The DuckDB side of the Parquet benchmark (docs/BENCHMARKS.md), one thread (SET threads=1).
// @duckdb/node-api is imported from tests/duckdb/node_modules (`make setup-npm`): ESM ignores
// NODE_PATH, so the import names the path.
//
//   node duckdb_parquet_bench.mjs json  IN.jsonl OUT.parquet   COPY (SELECT * FROM read_json(...))
//                                                              TO OUT (zstd): timed
//   node duckdb_parquet_bench.mjs write IN.jsonl OUT.parquet   loads IN into an in-memory table
//                                                              (not timed), then COPY table TO
//                                                              OUT (zstd): timed
//   node duckdb_parquet_bench.mjs read  FILE                   every column of FILE decoded
//                                                              (an aggregate over each): timed
// Prints one line: `<mode> rows=<n> seconds=<wall s> cpu_seconds=<s> rows_per_second=<r>`.
import { DuckDBInstance } from '../tests/duckdb/node_modules/@duckdb/node-api/lib/index.js';

const COLUMNS = "{id: 'BIGINT', qty: 'INTEGER', price: 'DOUBLE', code: 'VARCHAR', " +
  "city: 'VARCHAR', body: 'VARCHAR', ts: 'TIMESTAMP WITH TIME ZONE', day: 'DATE', note: 'VARCHAR'}";

const q = (s) => "'" + s.replaceAll("'", "''") + "'";

const [mode, a, b] = process.argv.slice(2);
// The zstd level: DuckDB's default (3) unless DUCKDB_ZSTD_LEVEL says otherwise.
const zstd = process.env.DUCKDB_ZSTD_LEVEL
  ? `COMPRESSION zstd, COMPRESSION_LEVEL ${Number(process.env.DUCKDB_ZSTD_LEVEL)}`
  : 'COMPRESSION zstd';
const instance = await DuckDBInstance.create(':memory:');
const conn = await instance.connect();
await conn.run('SET threads=1');
await conn.run("SET TimeZone='UTC'");
await conn.run('SET preserve_insertion_order=true');

const readJson = (path) =>
  `read_json(${q(path)}, format='newline_delimited', columns=${COLUMNS})`;

// Wall seconds of `sql`; the process CPU seconds (user + system, every thread) go to `cpu`.
let cpu = 0;
async function timed(sql) {
  const cpuStart = process.cpuUsage();
  const start = process.hrtime.bigint();
  await conn.run(sql);
  const wall = Number(process.hrtime.bigint() - start) / 1e9;
  const used = process.cpuUsage(cpuStart);
  cpu = (used.user + used.system) / 1e6;
  return wall;
}

async function count(sql) {
  const r = await conn.runAndReadAll(sql);
  return Number(r.getRows()[0][0]);
}

let seconds;
let rows;
if (mode === 'json') {
  seconds = await timed(
    `COPY (SELECT * FROM ${readJson(a)}) TO ${q(b)} (FORMAT parquet, ${zstd})`);
  rows = await count(`SELECT count(*) FROM read_parquet(${q(b)})`);
} else if (mode === 'write') {
  await conn.run(`CREATE TABLE t AS SELECT * FROM ${readJson(a)}`);
  seconds = await timed(`COPY t TO ${q(b)} (FORMAT parquet, ${zstd})`);
  rows = await count('SELECT count(*) FROM t');
} else if (mode === 'read') {
  const agg = 'count(*), max(id), max(qty), max(price), max(code), max(city), max(body), ' +
    'max(ts), max(day), max(note)';
  seconds = await timed(`CREATE TABLE r AS SELECT ${agg} FROM read_parquet(${q(a)})`);
  rows = await count(`SELECT count(*) FROM read_parquet(${q(a)})`);
} else {
  console.error('usage: node duckdb_parquet_bench.mjs json|write IN.jsonl OUT.parquet | read FILE');
  process.exit(2);
}
console.log(`${mode} rows=${rows} seconds=${seconds.toFixed(3)} cpu_seconds=${cpu.toFixed(3)} ` +
  `rows_per_second=${Math.round(rows / seconds)}`);
