// Azure Blob client for ferry's tests, on Microsoft's own SDK (@azure/storage-blob, pinned in
// package.json): sets up containers and checks what ferry wrote, independently of ferry's own
// Shared Key signer. Talks to the account in $AZURE_STORAGE_CONNECTION_STRING (Azurite's, from
// ferry/testing/azurite.h).
//
// Usage: node blob.mjs COMMAND ARGS...
//        node blob.mjs --framed COMMAND ARGS... [+ COMMAND ARGS...]...
//   (the second form runs the commands in turn in one process, saving the SDK's ~1 s of start-up
//   per command, and frames each one's output as "@@ <bytes>\n<output>\n")
//   create-container NAME             exit 3 when it exists
//   put CONTAINER BLOB @FILE|TEXT [--if-none-match]
//                                      one Put Blob of the file's bytes or of TEXT; prints
//                                      "STATUS" or "STATUS ErrorCode"
//   race CONTAINER BLOB N              N Put Blobs with If-None-Match: * at once, writer i's body
//                                      "writer-<i>" repeated to 64 KiB; prints one line per writer
//   get CONTAINER BLOB                 the blob's bytes on stdout
//   list CONTAINER PREFIX              the names under PREFIX, one a line
//   download CONTAINER PREFIX DIR      every blob under PREFIX into DIR (name below PREFIX as the
//                                      relative path); prints how many
//   sas CONTAINER MINUTES              a container SAS (read, add, create, write, delete, list)
//                                      signed with the account key, valid MINUTES; prints its
//                                      query string
//   blocks CONTAINER BLOB              "committed N uncommitted M": the blob's block lists
//   upload CONTAINER PREFIX DIR        every file under DIR as the blob PREFIX/<relative path>,
//                                      16 at once; prints how many
import fs from 'node:fs';
import path from 'node:path';
import {
  BlobServiceClient,
  ContainerSASPermissions,
  StorageSharedKeyCredential,
  generateBlobSASQueryParameters,
} from '@azure/storage-blob';

const usage = 'usage: node blob.mjs create-container|put|race|get|list|download|sas|blocks|upload ARGS...';

// AccountName and AccountKey of the connection string.
function sharedKeyCredential() {
  const fields = Object.fromEntries(process.env.AZURE_STORAGE_CONNECTION_STRING.split(';')
    .filter((f) => f.includes('='))
    .map((f) => [f.slice(0, f.indexOf('=')), f.slice(f.indexOf('=') + 1)]));
  return new StorageSharedKeyCredential(fields.AccountName, fields.AccountKey);
}

function outcome(e) {
  // A RestError from the service: its HTTP status and error code are the outcome.
  if (e && typeof e.statusCode === 'number') {
    return `${e.statusCode} ${e.code ?? ''}`.trim();
  }
  throw e;
}

function writerBody(i) {
  const unit = `writer-${i}|`;
  return Buffer.from(unit.repeat(Math.ceil(65536 / unit.length)).slice(0, 65536));
}

// Runs one command, appending what it prints to `out` (an array of Buffers); returns its exit
// code.
async function run(service, argv, out) {
  const print = (text) => out.push(Buffer.isBuffer(text) ? text : Buffer.from(`${text}\n`));
  const [command, ...args] = argv;
  const container = args.length > 0 ? service.getContainerClient(args[0]) : null;
  switch (command) {
    case 'create-container': {
      try {
        await container.create();
      } catch (e) {
        if (e.statusCode === 409) {
          console.error(`container ${args[0]}: ${e.code}`);
          return 3;
        }
        throw e;
      }
      return 0;
    }
    case 'put': {
      const [, blob, source, flag] = args;
      const data = source.startsWith('@') ? fs.readFileSync(source.slice(1)) : Buffer.from(source);
      const conditions = flag === '--if-none-match' ? { ifNoneMatch: '*' } : {};
      try {
        const r = await container.getBlockBlobClient(blob).upload(data, data.length, { conditions });
        print(`${r._response.status}`);
      } catch (e) {
        print(outcome(e));
      }
      return 0;
    }
    case 'race': {
      const [, blob, n] = args;
      const client = container.getBlockBlobClient(blob);
      const writers = [];
      for (let i = 0; i < Number(n); i++) {
        const body = writerBody(i);
        writers.push(client.upload(body, body.length, { conditions: { ifNoneMatch: '*' } })
          .then((r) => `${r._response.status}`, outcome));
      }
      for (const line of await Promise.all(writers)) {
        print(line);
      }
      return 0;
    }
    case 'get': {
      const data = await container.getBlobClient(args[1]).downloadToBuffer();
      print(data);
      return 0;
    }
    case 'list': {
      for await (const b of container.listBlobsFlat({ prefix: args[1] ?? '' })) {
        print(b.name);
      }
      return 0;
    }
    case 'download': {
      const [, prefix, dir] = args;
      let count = 0;
      for await (const b of container.listBlobsFlat({ prefix })) {
        const target = path.join(dir, b.name.slice(prefix.length).replace(/^\/+/, ''));
        fs.mkdirSync(path.dirname(target), { recursive: true });
        await container.getBlobClient(b.name).downloadToFile(target);
        count++;
      }
      print(count);
      return 0;
    }
    case 'sas': {
      const minutes = Number(args[1] ?? '60');
      const sas = generateBlobSASQueryParameters({
        containerName: args[0],
        permissions: ContainerSASPermissions.parse('racwdl'),
        startsOn: new Date(Date.now() - 5 * 60 * 1000),
        expiresOn: new Date(Date.now() + minutes * 60 * 1000),
      }, sharedKeyCredential());
      print(sas.toString());
      return 0;
    }
    case 'blocks': {
      const list = await container.getBlockBlobClient(args[1]).getBlockList('all');
      print(`committed ${(list.committedBlocks ?? []).length} uncommitted ${(list.uncommittedBlocks ?? []).length}`);
      return 0;
    }
    case 'upload': {
      const [, prefix, dir] = args;
      const files = fs.readdirSync(dir, { recursive: true })
        .filter((f) => fs.statSync(path.join(dir, f)).isFile());
      for (let at = 0; at < files.length; at += 16) {
        await Promise.all(files.slice(at, at + 16).map((f) => container
          .getBlockBlobClient(`${prefix}/${f.split(path.sep).join('/')}`)
          .uploadFile(path.join(dir, f))));
      }
      print(files.length);
      return 0;
    }
    default:
      console.error(usage);
      return 2;
  }
}

async function main(argv) {
  const conn = process.env.AZURE_STORAGE_CONNECTION_STRING;
  if (!conn) {
    throw new Error('AZURE_STORAGE_CONNECTION_STRING is not set');
  }
  const service = BlobServiceClient.fromConnectionString(conn);
  if (argv[0] !== '--framed') {
    const out = [];
    const code = await run(service, argv, out);
    process.stdout.write(Buffer.concat(out));
    return code;
  }
  const commands = [[]];
  for (const arg of argv.slice(1)) {
    if (arg === '+') {
      commands.push([]);
    } else {
      commands[commands.length - 1].push(arg);
    }
  }
  for (const command of commands) {
    const out = [];
    const code = await run(service, command, out);
    const bytes = Buffer.concat(out);
    process.stdout.write(`@@ ${bytes.length}\n`);
    process.stdout.write(bytes);
    process.stdout.write('\n');
    if (code !== 0) {
      return code;
    }
  }
  return 0;
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (e) {
  console.error(`blob.mjs ${process.argv.slice(2).join(' ')}: ${e.statusCode ?? ''} ${e.code ?? ''} ${e.message}`);
  process.exitCode = 1;
}
