// Protobuf messages for ferry's tests, registered with and encoded by
// @kafkajs/confluent-schema-registry with protobufjs, against the registry stand-in
// (registry_stand_in.mjs), which keeps serving the schemas while ferry reads them.
//
// Usage: [REGISTRY_PORT=N] node protobuf_messages.mjs TOPIC COUNT [v1|v2|v3|n1|n2 ...]
// Prints "REGISTRY <url>", "SCHEMA <hex of the all-types .proto text>", then for each version (default: all): COUNT lines
// "MSG <value hex> <key hex | none>" (ids numbered on across versions; keys OrderKey {id,
// region}, subject TOPIC-key, for version "all" but every tenth message), then "END", waiting for a line on stdin
// between versions; serves until stdin closes. Version "all" is the Order message below, which
// holds every type ferry maps (first in its file: the library encodes the file's first type,
// and the message index [0] names the first message); v1..v3 are an evolving Order (v2 adds `coupon`, v3 removes
// `note`), and n1, n2 another whose change is inside nested messages (n2 adds Loc.alt and the
// repeated Item's qty). The well-known types' files (Timestamp, wrappers, Struct) are registered as subjects
// of their own and referenced, as Confluent's serializers do; their texts are libprotobuf-dev's.
//
// The library (4.1.0) frames a message as magic byte, id, payload: it writes no message-index
// list, which the Confluent wire format puts before a Protobuf payload. This script inserts it
// (a single 0, "the first message") between the library's header and its payload; the payload
// bytes are protobufjs's.
import fs from 'node:fs';
import readline from 'node:readline';
import Long from 'long';
import {SchemaRegistry, SchemaType} from '@kafkajs/confluent-schema-registry';
import {startRegistry} from './registry_stand_in.mjs';

const [topic, countText, ...versionArgs] = process.argv.slice(2);
const count = Number(countText);
const versions = versionArgs.length ? versionArgs : ['all'];

const allProto = `syntax = "proto3";
package shop;
import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";
import "google/protobuf/struct.proto";
message Order {
  int64 id = 1; string name = 2; double amount = 3; float ratio = 4; int32 qty = 5;
  bool ok = 6; repeated string tags = 7; map<string, int32> attrs = 8; Status status = 9;
  optional string note = 10; uint32 u32 = 11; uint64 u64 = 12; sint32 s32 = 13;
  sint64 s64 = 14; fixed32 f32 = 15; fixed64 f64 = 16; sfixed32 sf32 = 17; sfixed64 sf64 = 18;
  bytes raw = 19; Inner inner = 20; repeated Inner inners = 21; repeated int32 nums = 22;
  oneof choice { int32 n = 23; string s = 24; }
  google.protobuf.Timestamp ts = 25; google.protobuf.Int64Value wl = 26;
  google.protobuf.StringValue ws = 27; google.protobuf.Struct st = 28;
}
message Inner { int32 a = 1; optional int64 b = 2; }
enum Status { NEW = 0; PAID = 1; SHIPPED = 2; }
`;
const evolving = {
  v1: 'int64 id = 1; string name = 2; string note = 3;',
  v2: 'int64 id = 1; string name = 2; string note = 3; string coupon = 4;',
  v3: 'int64 id = 1; string name = 2; string coupon = 4;',
  // n1, n2: the change is inside nested messages (Loc.alt, and Item.qty of a repeated Item).
  n1: 'int64 id = 1; string name = 2; Loc loc = 3; repeated Item items = 4; ' +
      'message Loc { double lat = 1; } message Item { string sku = 1; }',
  n2: 'int64 id = 1; string name = 2; Loc loc = 3; repeated Item items = 4; ' +
      'message Loc { double lat = 1; int64 alt = 2; } message Item { string sku = 1; int32 qty = 2; }',
};

function order(i) {
  return {
    id: i, name: `name-${i}`, amount: i * 1.5, ratio: i / 4, qty: -i, ok: i % 2 === 0,
    tags: [`t${i}`, 'x'], attrs: {k: i}, status: i % 3,
    ...(i % 4 === 0 ? {} : {note: `note ${i}`}),
    u32: 4000000000 + i, u64: Long.fromString('18446744073709551615', true).subtract(i),
    s32: -i, s64: Long.fromString('-9000000000000000000').subtract(i), f32: i, f64: i * 7,
    sf32: -i * 2, sf64: -i * 3, raw: Buffer.from(`raw${i}`),
    inner: i % 3 === 0 ? {a: i * 2} : {a: i * 2, b: i * 1000000000},
    inners: [{a: 1}, {a: i}], nums: [i, -1, 300],
    ...(i % 2 === 0 ? {n: i} : {s: `s${i}`}),
    ts: {seconds: 1700000000 + i, nanos: 123000},
    wl: {value: i}, ...(i % 5 === 0 ? {} : {ws: {value: `w${i}`}}),
    st: {fields: {k: {stringValue: `v${i}`}, n: {numberValue: i}}},
  };
}

const registry = await startRegistry(Number(process.env.REGISTRY_PORT || 0));
const client = new SchemaRegistry({host: registry.url});
registry.ready();  // registering with references reads them back; ferry may read them too
const references = [];
for (const name of ['timestamp', 'wrappers', 'struct']) {
  const file = `google/protobuf/${name}.proto`;
  const text = fs.readFileSync(`/usr/include/${file}`, 'utf8');
  await client.register({type: SchemaType.PROTOBUF, schema: text}, {subject: file});
  references.push({name: file, subject: file, version: 1});
}
const ids = {};
ids.all = (await client.register({type: SchemaType.PROTOBUF, schema: allProto, references},
                                 {subject: `${topic}-value`})).id;
const keyProto = `syntax = "proto3";\npackage shop;\nmessage OrderKey { int64 id = 1; string region = 2; }\n`;
const keyId = (await client.register({type: SchemaType.PROTOBUF, schema: keyProto},
                                     {subject: `${topic}-key`})).id;
// The library's frame with the message-index list [0] inserted after its 5-byte header.
const withIndexes = (framed) => Buffer.concat([framed.subarray(0, 5), Buffer.from([0]),
                                               framed.subarray(5)]);
process.stdout.write(`REGISTRY ${registry.url}\n`);
process.stdout.write(`SCHEMA ${Buffer.from(allProto).toString('hex')}\n`);

const lines = readline.createInterface({input: process.stdin});
const next = lines[Symbol.asyncIterator]();
let n = 0;
for (let v = 0; v < versions.length; ++v) {
  const version = versions[v];
  if (v > 0) await next.next();  // "next": the test produced the previous version
  let id = ids.all;
  if (version !== 'all') {
    id = (await client.register(
        {type: SchemaType.PROTOBUF,
         schema: `syntax = "proto3";\npackage shop;\nmessage Order { ${evolving[version]} }\n`},
        {subject: `${topic}-value`})).id;
  }
  for (let i = 0; i < count; ++i, ++n) {
    const payload = version === 'all' ? order(n)
        : {id: n, name: `name-${n}`, note: `note ${n}`, coupon: `c${n}`,
           loc: {lat: n + 0.5, alt: n * 10}, items: [{sku: `s${n}`, qty: n}]};
    const value = withIndexes(await client.encode(id, payload)).toString('hex');
    const key = version !== 'all' || n % 10 === 9 ? 'none'
        : withIndexes(await client.encode(keyId, {id: n, region: ['eu', 'us'][n % 2]}))
              .toString('hex');
    process.stdout.write(`MSG ${value} ${key}\n`);
  }
  process.stdout.write('END\n');
}
for await (const _ of {[Symbol.asyncIterator]: () => next}) { /* until stdin closes */ }
registry.server.close(() => process.exit(0));
