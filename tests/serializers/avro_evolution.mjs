// Avro messages across three versions of one subject, for ferry's schema evolution test: each
// version is registered only when the test asks for it (a line on stdin), as a producer team
// would roll it out.
//
// Usage: node avro_evolution.mjs TOPIC PER_VERSION [nested]
// Prints "REGISTRY <url>", then for v1 now and for v2 and v3 after each stdin line: PER_VERSION
// lines "MSG <hex>" and "END v<N>". Message ids run on across versions (v1 0.., v2 after it).
//   v1: {id, name, note}
//   v2: v1 + coupon (string, default "none")       a new field with a default
//   v3: v2 - note                                   a removed field
// With "nested", two versions whose change is inside nested records:
//   v1: {id, name, loc: Loc {lat}, items: [Item {sku}]}
//   v2: {id, name, loc: Loc {lat, alt}, items: [Item {sku, qty}]}   (alt, qty with defaults)
import readline from 'node:readline';
import {SchemaRegistry, SchemaType} from '@kafkajs/confluent-schema-registry';
import {startRegistry} from './registry_stand_in.mjs';

const [topic, perText, variant] = process.argv.slice(2);
const per = Number(perText);
const field = {
  id: {name: 'id', type: 'long'},
  name: {name: 'name', type: 'string'},
  note: {name: 'note', type: ['null', 'string'], default: null},
  coupon: {name: 'coupon', type: 'string', default: 'none'},
};
const loc = (extra) => ({name: 'loc', type: {type: 'record', name: 'Loc', fields: [
  {name: 'lat', type: 'double'}, ...extra]}});
const items = (extra) => ({name: 'items', type: {type: 'array', items: {type: 'record',
  name: 'Item', fields: [{name: 'sku', type: 'string'}, ...extra]}}});
const versions = variant === 'nested' ? [
  [field.id, field.name, loc([]), items([])],
  [field.id, field.name, loc([{name: 'alt', type: 'long', default: 0}]),
   items([{name: 'qty', type: 'int', default: 0}])],
] : [
  [field.id, field.name, field.note],
  [field.id, field.name, field.note, field.coupon],
  [field.id, field.name, field.coupon],
];

const registry = await startRegistry();
const client = new SchemaRegistry({host: registry.url});
registry.ready();
process.stdout.write(`REGISTRY ${registry.url}\n`);
let next = 0;
async function emit(v) {
  const schema = {type: 'record', name: 'Order', namespace: 'com.example', fields: versions[v]};
  // The stand-in checks no compatibility; the versions are backward compatible anyway.
  const {id} = await client.register({type: SchemaType.AVRO, schema: JSON.stringify(schema)},
                                     {subject: `${topic}-value`});
  for (let k = 0; k < per; ++k, ++next) {
    const value = {id: next, name: `name-${next}`, note: `note ${next}`, coupon: `c${next}`,
                   loc: {lat: next + 0.5, alt: next * 10}, items: [{sku: `s${next}`, qty: next}]};
    const framed = await client.encode(id, value);
    process.stdout.write(`MSG ${framed.toString('hex')}\n`);
  }
  process.stdout.write(`END v${v + 1}\n`);
}
await emit(0);
let v = 1;
const lines = readline.createInterface({input: process.stdin});
lines.on('line', async () => {
  if (v < versions.length) await emit(v++);
});
lines.on('close', () => registry.server.close(() => process.exit(0)));
