// A Schema Registry stand-in for ferry's tests: the subset of the Confluent Schema Registry REST
// API that @kafkajs/confluent-schema-registry (registering, encoding) and ferry (reading) call,
// in memory. No registry server is packaged for Debian, so the tests bring this one; it is not
// a registry (no compatibility checks), only the wire answers one gives.
//
//   GET  /config/{subject}                    404 40401 until PUT, then {compatibilityLevel}
//   PUT  /config/{subject}                    {compatibility}
//   POST /subjects/{subject}/versions         {id}: a text seen before keeps its id
//   GET  /schemas/ids/{id}                    {schema, schemaType?, references?}
//   GET  /subjects/{subject}/versions/{v}     {subject, version, id, schema, ...}; v = latest too
import http from 'node:http';

// Listens on 127.0.0.1:`port` (0: a free one). Until ready() is called, the reads ferry makes
// (GET /schemas/..., GET /subjects/...) answer 503, as a registry still loading its schemas
// does; registering works from the start.
export async function startRegistry(port = 0) {
  let loading = true;
  const byId = new Map();      // id -> {schema, schemaType, references}
  const subjects = new Map();  // subject -> [id, ...] (version = index + 1)
  const configs = new Map();
  const requests = [];
  const send = (res, status, body) => {
    res.writeHead(status, {'Content-Type': 'application/vnd.schemaregistry.v1+json'});
    res.end(JSON.stringify(body));
  };
  const notFound = (res, code, message) => send(res, 404, {error_code: code, message});
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => { body += chunk; });
    req.on('end', () => {
      const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
      requests.push(`${req.method} ${path}`);
      if (loading && req.method === 'GET' && /^\/(schemas|subjects)\//.test(path)) {
        return send(res, 503, {error_code: 50003, message: 'the registry is loading'});
      }
      let m;
      if ((m = path.match(/^\/config\/(.+)$/))) {
        if (req.method === 'PUT') {
          const level = JSON.parse(body).compatibility;
          configs.set(m[1], level);
          return send(res, 200, {compatibility: level});
        }
        return configs.has(m[1]) ? send(res, 200, {compatibilityLevel: configs.get(m[1])})
                                 : notFound(res, 40401, 'Subject not found');
      }
      if ((m = path.match(/^\/subjects\/(.+)\/versions$/)) && req.method === 'POST') {
        const {schema, schemaType, references} = JSON.parse(body);
        let id = [...byId].find(([, s]) => s.schema === schema && s.schemaType === schemaType)?.[0];
        if (id === undefined) {
          id = byId.size + 1;
          byId.set(id, {schema, schemaType, references: references || []});
        }
        const versions = subjects.get(m[1]) || [];
        if (!versions.includes(id)) versions.push(id);
        subjects.set(m[1], versions);
        return send(res, 200, {id});
      }
      if ((m = path.match(/^\/schemas\/ids\/(\d+)$/))) {
        const s = byId.get(Number(m[1]));
        if (!s) return notFound(res, 40403, 'Schema not found');
        const answer = {schema: s.schema, references: s.references};
        if (s.schemaType) answer.schemaType = s.schemaType;
        return send(res, 200, answer);
      }
      if ((m = path.match(/^\/subjects\/(.+)\/versions\/(latest|\d+)$/))) {
        const versions = subjects.get(m[1]);
        if (!versions) return notFound(res, 40401, 'Subject not found');
        const version = m[2] === 'latest' ? versions.length : Number(m[2]);
        const id = versions[version - 1];
        if (id === undefined) return notFound(res, 40402, 'Version not found');
        const s = byId.get(id);
        return send(res, 200, {subject: m[1], version, id, schema: s.schema,
                               schemaType: s.schemaType || 'AVRO', references: s.references});
      }
      return notFound(res, 404, `not in the stand-in: ${req.method} ${path}`);
    });
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return {url: `http://127.0.0.1:${server.address().port}`, server, requests,
          ready: () => { loading = false; }};
}
