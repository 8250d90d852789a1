// Debezium change events as Confluent's AvroConverter writes them, for ferry's debezium-avro
// tests (issue 42): the Envelope and Key schemas as AvroData makes them of Debezium's PostgreSQL
// connector schemas (connect.name attributes, optional fields as unions with null), registered
// and encoded by @kafkajs/confluent-schema-registry with avsc (code no one here wrote).
//
// Usage: node debezium_avro_messages.mjs TOPIC EVENTS_FILE
// EVENTS_FILE holds one change per line, as the test generated it:
//   {"op": "c"|"r"|"u"|"d"|"tombstone", "id": 7, "before": {...}|null, "after": {...}|null,
//    "lsn": 123, "email": true|false}
// `email` true: the row has the `email` column (the source table gained it): the event is
// encoded with version 2 of the value subject, registered at the first such event.
// Prints "REGISTRY <url>", then per event "MSG <value hex> <key hex>" (an empty value hex for a
// tombstone), then "END". Stays up (serving the registry) until stdin closes.
import fs from 'node:fs';
import readline from 'node:readline';
import {SchemaRegistry, SchemaType} from '@kafkajs/confluent-schema-registry';
import {startRegistry} from './registry_stand_in.mjs';

const [topic, eventsFile] = process.argv.slice(2);
const ns = `shop.public.${topic}`;
const valueFields = (email) => [
  {name: 'id', type: 'int'},
  {name: 'name', type: ['null', 'string'], default: null},
  {name: 'joined', type: ['null', {type: 'int', 'connect.version': 1,
                                   'connect.name': 'io.debezium.time.Date'}], default: null},
  ...(email ? [{name: 'email', type: ['null', 'string'], default: null}] : []),
];
const envelope = (email) => ({
  type: 'record', name: 'Envelope', namespace: ns,
  fields: [
    {name: 'before', type: ['null', {type: 'record', name: 'Value', fields: valueFields(email),
                                     'connect.name': `${ns}.Value`}], default: null},
    {name: 'after', type: ['null', 'Value'], default: null},
    {name: 'source', type: {type: 'record', name: 'Source',
                            namespace: 'io.debezium.connector.postgresql', fields: [
      {name: 'version', type: 'string'}, {name: 'connector', type: 'string'},
      {name: 'name', type: 'string'}, {name: 'ts_ms', type: 'long'},
      {name: 'snapshot', type: [{type: 'string', 'connect.version': 1,
                                 'connect.name': 'io.debezium.data.Enum'}, 'null'],
       default: 'false'},
      {name: 'db', type: 'string'}, {name: 'schema', type: 'string'},
      {name: 'table', type: 'string'},
      {name: 'txId', type: ['null', 'long'], default: null},
      {name: 'lsn', type: ['null', 'long'], default: null},
      {name: 'xmin', type: ['null', 'long'], default: null}],
      'connect.name': 'io.debezium.connector.postgresql.Source'}},
    {name: 'op', type: 'string'},
    {name: 'ts_ms', type: ['null', 'long'], default: null},
    {name: 'transaction', type: ['null', {type: 'record', name: 'block', namespace: 'event',
      fields: [{name: 'id', type: 'string'}, {name: 'total_order', type: 'long'},
               {name: 'data_collection_order', type: 'long'}],
      'connect.name': 'event.block'}], default: null},
  ],
  'connect.name': `${ns}.Envelope`,
});
const keySchema = {type: 'record', name: 'Key', namespace: ns,
                   fields: [{name: 'id', type: 'int'}], 'connect.name': `${ns}.Key`};

const registry = await startRegistry();
const client = new SchemaRegistry({host: registry.url});
registry.ready();
process.stdout.write(`REGISTRY ${registry.url}\n`);
const register = async (schema, subject) =>
  (await client.register({type: SchemaType.AVRO, schema: JSON.stringify(schema)}, {subject})).id;
const keyId = await register(keySchema, `${topic}-key`);
const valueIds = [await register(envelope(false), `${topic}-value`)];
const lines = fs.readFileSync(eventsFile, 'utf8').split('\n').filter((l) => l.length > 0);
for (const line of lines) {
  const e = JSON.parse(line);
  const key = (await client.encode(keyId, {id: e.id})).toString('hex');
  if (e.op === 'tombstone') {
    process.stdout.write(`MSG  ${key}\n`);
    continue;
  }
  if (e.email && valueIds.length === 1) {
    valueIds.push(await register(envelope(true), `${topic}-value`));
  }
  // avsc takes a union's value bare when its branches are told apart by type.
  const row = (r) => (r === null ? null : {...r, ...(e.email ? {email: r.email ?? null} : {})});
  const value = {
    before: row(e.before), after: row(e.after),
    source: {version: '2.5.0.Final', connector: 'postgresql', name: 'shop',
             ts_ms: 1700000000000 + e.lsn, snapshot: e.op === 'r' ? 'true' : 'false', db: 'shop',
             schema: 'public', table: topic, txId: 700 + e.lsn, lsn: e.lsn, xmin: null},
    op: e.op, ts_ms: 1700000000500 + e.lsn, transaction: null,
  };
  const framed = await client.encode(valueIds[e.email ? 1 : 0], value);
  process.stdout.write(`MSG ${framed.toString('hex')} ${key}\n`);
}
process.stdout.write('END\n');
readline.createInterface({input: process.stdin})
    .on('close', () => registry.server.close(() => process.exit(0)));
