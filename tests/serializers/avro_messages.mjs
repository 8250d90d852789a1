// Avro messages for ferry's tests, framed and encoded by @kafkajs/confluent-schema-registry with
// avsc, against the registry stand-in (registry_stand_in.mjs), which keeps serving the schemas
// while ferry reads them.
//
// Usage: [REGISTRY_PORT=N] node avro_messages.mjs TOPIC COUNT
// Prints "REGISTRY <url>", then COUNT lines "MSG <value hex> <key hex | none>" (message i has id
// i), then "END"; serves until stdin closes. Keys: OrderKey {id, region} (subject TOPIC-key),
// none for every tenth message. The schema (subject TOPIC-value) holds every Avro type ferry maps; message
// i's values are the formulas below, which the C++ test checks DuckDB's reading against.
import {SchemaRegistry, SchemaType} from '@kafkajs/confluent-schema-registry';
import {startRegistry} from './registry_stand_in.mjs';

const [topic, countText] = process.argv.slice(2);
const count = Number(countText);
const schema = {
  type: 'record', name: 'Order', namespace: 'com.example',
  fields: [
    {name: 'id', type: 'long'},
    {name: 'name', type: 'string'},
    {name: 'amount', type: 'double'},
    {name: 'ratio', type: 'float'},
    {name: 'qty', type: 'int'},
    {name: 'ok', type: 'boolean'},
    {name: 'tags', type: {type: 'array', items: 'string'}},
    {name: 'attrs', type: {type: 'map', values: 'int'}},
    {name: 'status', type: {type: 'enum', name: 'Status', symbols: ['NEW', 'PAID', 'SHIPPED']}},
    {name: 'note', type: ['null', 'string'], default: null},
    {name: 'price', type: {type: 'bytes', logicalType: 'decimal', precision: 10, scale: 2}},
    {name: 'day', type: {type: 'int', logicalType: 'date'}},
    {name: 'ts', type: {type: 'long', logicalType: 'timestamp-millis'}},
    {name: 'tsu', type: {type: 'long', logicalType: 'timestamp-micros'}},
    {name: 'local', type: {type: 'long', logicalType: 'local-timestamp-micros'}},
    {name: 'uid', type: {type: 'string', logicalType: 'uuid'}},
    {name: 'fx', type: {type: 'fixed', name: 'Four', size: 4}},
    {name: 'raw', type: 'bytes'},
    {name: 'inner', type: {type: 'record', name: 'Inner',
                           fields: [{name: 'a', type: 'int'}, {name: 'b', type: ['null', 'long']}]}},
    {name: 'choice', type: ['int', 'string']},
  ],
};

// Big-endian two's complement of a non-negative unscaled decimal.
function decimalBytes(unscaled) {
  let hex = unscaled.toString(16);
  if (hex.length % 2) hex = '0' + hex;
  if (parseInt(hex[0], 16) >= 8) hex = '00' + hex;
  return Buffer.from(hex, 'hex');
}

function order(i) {
  return {
    id: i,
    name: `name-${i}`,
    amount: i * 1.5,
    ratio: i / 4,
    qty: -i,
    ok: i % 2 === 0,
    tags: [`t${i}`, 'x'],
    attrs: {k: i},
    status: ['NEW', 'PAID', 'SHIPPED'][i % 3],
    note: i % 4 === 0 ? null : `note ${i}`,
    price: decimalBytes(i * 100 + 25),  // i.25
    day: 19000 + i,
    ts: 1700000000000 + i * 1000,
    tsu: 1700000000000000 + i,
    local: 1600000000000000 + i,
    uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    fx: Buffer.from([i & 255, (i + 1) & 255, (i + 2) & 255, (i + 3) & 255]),
    raw: Buffer.from(`raw${i}`),
    inner: {a: i * 2, b: i % 3 === 0 ? null : i * 1000000000},
    choice: i % 2 === 0 ? i : `s${i}`,
  };
}

const keySchema = {
  type: 'record', name: 'OrderKey', namespace: 'com.example',
  fields: [{name: 'id', type: 'long'}, {name: 'region', type: 'string'}],
};

const registry = await startRegistry(Number(process.env.REGISTRY_PORT || 0));
const client = new SchemaRegistry({host: registry.url});
const {id} = await client.register({type: SchemaType.AVRO, schema: JSON.stringify(schema)},
                                   {subject: `${topic}-value`});
const keyId = (await client.register({type: SchemaType.AVRO, schema: JSON.stringify(keySchema)},
                                     {subject: `${topic}-key`})).id;
registry.ready();  // the schema is in: ferry may read it
process.stdout.write(`REGISTRY ${registry.url}\n`);
for (let i = 0; i < count; ++i) {
  const framed = await client.encode(id, order(i));
  const key = i % 10 === 9 ? 'none'
      : (await client.encode(keyId, {id: i, region: ['eu', 'us'][i % 2]})).toString('hex');
  process.stdout.write(`MSG ${framed.toString('hex')} ${key}\n`);
}
process.stdout.write('END\n');
process.stdin.resume();
process.stdin.on('end', () => registry.server.close(() => process.exit(0)));
