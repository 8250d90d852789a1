// Debezium change events as Confluent's ProtobufConverter writes them, for ferry's
// debezium-protobuf tests (issue 42): the Envelope and Key as ProtobufData makes them of
// Debezium's PostgreSQL connector schemas (proto3; structs as messages nested in the envelope,
// fields numbered in Connect order, io.debezium.time.Date a plain int32, optional fields plain
// fields: the converter's defaults), registered and encoded by
// @kafkajs/confluent-schema-registry with protobufjs (code no one here wrote).
//
// Usage: node debezium_protobuf_messages.mjs TOPIC EVENTS_FILE
// The events file and the output are those of debezium_avro_messages.mjs: "REGISTRY <url>", then
// per event "MSG <value hex> <key hex>" (an empty value hex for a tombstone), then "END"; stays
// up (serving the registry) until stdin closes. `email` true: the event is encoded with version
// 2 of the value subject (Value gains `email`), registered at the first such event.
//
// The library (4.1.0) writes no message-index list; as protobuf_messages.mjs does, this script
// inserts [0] (the first message of the file: Envelope, Key) after its 5-byte header.
import fs from 'node:fs';
import readline from 'node:readline';
import {SchemaRegistry, SchemaType} from '@kafkajs/confluent-schema-registry';
import {startRegistry} from './registry_stand_in.mjs';

const [topic, eventsFile] = process.argv.slice(2);
const pkg = `shop.public.${topic}`;
const envelope = (email) => `syntax = "proto3";
package ${pkg};
message Envelope {
  Value before = 1;
  Value after = 2;
  Source source = 3;
  string op = 4;
  int64 ts_ms = 5;
  block transaction = 6;
  message Value {
    int32 id = 1;
    string name = 2;
    int32 joined = 3;
    ${email ? 'string email = 4;' : ''}
  }
  message Source {
    string version = 1; string connector = 2; string name = 3; int64 ts_ms = 4;
    string snapshot = 5; string db = 6; string schema = 7; string table = 8; int64 txId = 9;
    int64 lsn = 10; int64 xmin = 11;
  }
  message block { string id = 1; int64 total_order = 2; int64 data_collection_order = 3; }
}
`;
const keyProto = `syntax = "proto3";\npackage ${pkg};\nmessage Key { int32 id = 1; }\n`;

const registry = await startRegistry();
const client = new SchemaRegistry({host: registry.url});
registry.ready();
process.stdout.write(`REGISTRY ${registry.url}\n`);
const register = async (schema, subject) =>
  (await client.register({type: SchemaType.PROTOBUF, schema}, {subject})).id;
const withIndexes = (framed) => Buffer.concat([framed.subarray(0, 5), Buffer.from([0]),
                                               framed.subarray(5)]);
const keyId = await register(keyProto, `${topic}-key`);
const valueIds = [await register(envelope(false), `${topic}-value`)];
const lines = fs.readFileSync(eventsFile, 'utf8').split('\n').filter((l) => l.length > 0);
for (const line of lines) {
  const e = JSON.parse(line);
  const key = withIndexes(await client.encode(keyId, {id: e.id})).toString('hex');
  if (e.op === 'tombstone') {
    process.stdout.write(`MSG  ${key}\n`);
    continue;
  }
  if (e.email && valueIds.length === 1) {
    valueIds.push(await register(envelope(true), `${topic}-value`));
  }
  // A null field is left out, as the converter writes a null with plain proto3 fields.
  const row = (r) => (r === null ? null : Object.fromEntries(
      Object.entries(r).filter(([k, v]) => v !== null && (e.email || k !== 'email'))));
  // protobufjs takes the fields by their camelCase names (ts_ms: tsMs). Unlike libprotobuf, it
  // writes a zero it is given (id 0): ferry's unit tests cover zeros written as nothing.
  const value = {
    ...(e.before === null ? {} : {before: row(e.before)}),
    ...(e.after === null ? {} : {after: row(e.after)}),
    source: {version: '2.5.0.Final', connector: 'postgresql', name: 'shop',
             tsMs: 1700000000000 + e.lsn, snapshot: e.op === 'r' ? 'true' : 'false', db: 'shop',
             schema: 'public', table: topic, txId: 700 + e.lsn, lsn: e.lsn},
    op: e.op, tsMs: 1700000000500 + e.lsn,
  };
  const framed = withIndexes(await client.encode(valueIds[e.email ? 1 : 0], value));
  process.stdout.write(`MSG ${framed.toString('hex')} ${key}\n`);
}
process.stdout.write('END\n');
readline.createInterface({input: process.stdin})
    .on('close', () => registry.server.close(() => process.exit(0)));
