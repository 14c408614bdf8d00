// read.mjs reads one table of a Delta Sharing server with a third-party
// client: the npm package "delta-sharing" 0.0.2
// (https://github.com/goodwillpunning/nodejs-sharing-client), installed from
// the npm registry with
//
//	npm ci --ignore-scripts --prefix examples/sharing/interop
//
// Usage: node read.mjs <profile file> <share>.<schema>.<table>
//
// It prints one JSON object on stdout:
//
//	{"shares": [...], "schemas": [...], "tables": [...], "allTables": [...],
//	 "protocol": {...}, "metadata": {...},
//	 "files": [{"url", "id", "size", "partitionValues", "rows"}, ...],
//	 "rows": [{...}, ...], "dataFrameRows": [{...}, ...] or null,
//	 "dataFrameError": null or the error createDataFrame threw}
//
// Every step goes through the package's own code, nothing of the protocol is
// written here:
//   - DeltaSharingProfile.readFromFile parses the profile file;
//   - SharingClient lists shares, schemas, tables and all-tables (its
//     paging loops; all-tables is answered, so its fallback to listing
//     schema by schema on a 404 is not taken);
//   - DataSharingRestClient.queryTableMetadataAsync and .listFilesInTable
//     send the metadata and query requests and parse their NDJSON;
//   - DeltaSharingReader.createDataArray downloads every file URL and reads
//     it with parquetjs-lite (ParquetReader.openUrl over "request": a GET
//     cut off after its Content-Length, then one ranged GET per footer,
//     column chunk and page read): these are "rows";
//   - DeltaSharingReader.createDataFrame does the same into a danfo.js
//     DataFrame (danfojs-node 1.1.2, pure-JS TensorFlow.js): "dataFrameRows",
//     or "dataFrameError" when danfo refuses the rows (any long column);
//   - "files" reads each file URL on its own with the very call the reader
//     makes (its #toArray is private), so that rows can be matched to the
//     file's partitionValues.
//
// What the package cannot do, and so is not exercised: it has no call for
// the table version, changes (CDF) or time travel, and sends no
// delta-sharing-capabilities header, so it only ever gets the parquet
// response format; its list calls never send maxResults/pageToken. The
// apache-arrow dependency is declared but never used by the package (Arrow
// JS reads no Parquet). parquetjs-lite 0.8.7 opens only files whose footer
// says Parquet format version 1 (parquet-mr's; arrow-go and so iceberg-go
// write 2: "invalid parquet version"), decodes neither ZSTD nor
// RLE_DICTIONARY pages, and returns every dictionary-encoded value as a
// string (see modules/gateway/sharing_interop_test.go).
import { createRequire } from 'node:module';
import path from 'node:path';

// danfo.js / TensorFlow.js print banners with console.log: keep stdout for
// the JSON answer alone.
console.log = (...args) => console.error(...args);

const require = createRequire(import.meta.url);
const ds = require('delta-sharing');
// The client's own dependencies, resolved as the client resolves them.
const clientRequire = createRequire(require.resolve('delta-sharing'));
const parquet = clientRequire('parquetjs-lite');
const request = clientRequire('request');
const dfd = clientRequire('danfojs-node');

const [profileArg, name] = process.argv.slice(2);
const parts = (name || '').split('.');
if (!profileArg || parts.length !== 3 || parts.some((p) => p === '')) {
  console.error('usage: node read.mjs <profile file> <share>.<schema>.<table>');
  process.exit(2);
}
const [shareName, schemaName, tableName] = parts;

// readFromFile resolves relative paths against the package's own directory:
// hand it an absolute path.
const profile = ds.DeltaSharingProfile.readFromFile(path.resolve(profileArg));

// The client's axios session gives up after 2 s; a loaded CI machine
// (go test ./... on 2 cores) can be slower than that, so widen it. This
// sets a field of the client's objects; none of its code is replaced.
const patient = (restClient) => {
  restClient._session.defaults.timeout = 60000;
  return restClient;
};

const client = new ds.SharingClient(profile);
patient(client._restClient);
const shares = await client.listSharesAsync();
const schemas = [];
const tables = [];
for (const share of shares) {
  for (const schema of await client.listSchemasAsync(share)) {
    schemas.push(schema);
    tables.push(...(await client.listTablesAsync(schema)));
  }
}
const allTables = await client.listAllTablesAsync();

const rest = patient(new ds.DataSharingRestClient(profile));
const table = new ds.Table(tableName, shareName, schemaName);
const meta = await rest.queryTableMetadataAsync(table);
const listed = await rest.listFilesInTable(table);

const files = [];
for (const f of listed.addFiles) {
  // The same two calls as DeltaSharingReader#toArray.
  const reader = await parquet.ParquetReader.openUrl(request, f.url);
  const cursor = reader.getCursor();
  const rows = [];
  for (let r = await cursor.next(); r; r = await cursor.next()) {
    rows.push(r);
  }
  await reader.close();
  files.push({ url: f.url, id: f.id, size: f.size, partitionValues: f.partitionValues, stats: f.stats, rows });
}

const reader = new ds.DeltaSharingReader(table, rest);
const rows = await reader.createDataArray();
// createDataFrame hands parquetjs-lite's rows to danfo.js, which cannot
// hold the BigInt parquetjs-lite makes of every INT64 (Delta "long")
// value: it throws "Cannot convert a BigInt value to a number" for any
// table with a long column. Report the error rather than die, so the rest
// is still checked.
let dataFrameRows = null;
let dataFrameError = null;
try {
  const df = await reader.createDataFrame();
  dataFrameRows = df && df.shape[0] > 0 ? dfd.toJSON(df, { format: 'column' }) : [];
} catch (err) {
  dataFrameError = String(err);
}

const out = {
  shares: shares.map((s) => s.shareName),
  schemas: schemas.map((s) => ({ name: s.schemaName, share: s.share })),
  tables: tables.map((t) => ({ name: t.tableName, schema: t.schema, share: t.share })),
  allTables: allTables.map((t) => ({ name: t.tableName, schema: t.schema, share: t.share })),
  protocol: { minReaderVersion: meta.protocol.minReaderVersion },
  metadata: {
    id: meta.metadata.id,
    name: meta.metadata.tableName,
    format: meta.metadata.format,
    schemaString: meta.metadata.schemaString,
    partitionColumns: meta.metadata.partitionColumns,
  },
  files,
  rows,
  dataFrameRows,
  dataFrameError,
};
// parquetjs-lite reads INT64 as BigInt, which JSON cannot hold: print the
// ones a JSON number holds exactly as numbers, the others as strings.
process.stdout.write(
  JSON.stringify(out, (_, v) =>
    typeof v === 'bigint' ? (Number.isSafeInteger(Number(v)) ? Number(v) : v.toString()) : v,
  ) + '\n',
);
