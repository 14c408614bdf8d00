// An Iceberg Java round trip against an Iceberg REST catalog: RESTCatalog
// and S3FileIO (iceberg-aws-bundle) with the client properties in the
// CLIENT_PROPS environment variable (key=value lines). Checks that those
// properties reach the object store (a file written and read back through
// table.io(), an append committed: manifests written by S3FileIO) and
// whether views can be used. Run with java's source launcher:
//   java -cp "$(cat classpath)" JavaCheck.java URI WAREHOUSE NAMESPACE
// Prints one line per step and 'N passed, N failed'.
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.types.Types;

public class JavaCheck {
  static int passed, failed;

  static <T> T step(String name, Callable<T> fn) {
    try {
      T out = fn.call();
      passed++;
      System.out.println("  ok   " + name + (out == null ? "" : ": " + out));
      return out;
    } catch (Throwable e) {
      failed++;
      String msg = String.valueOf(e.getMessage());
      System.out.println("  FAIL " + name + ": " + e.getClass().getSimpleName() + ": "
          + msg.substring(0, Math.min(400, msg.length())));
      return null;
    }
  }

  static RESTCatalog open(String uri, String warehouse, Map<String, String> extra) {
    Map<String, String> props = new HashMap<>();
    props.put("uri", uri);
    if (!warehouse.isEmpty()) props.put("warehouse", warehouse);
    String env = System.getenv().getOrDefault("CLIENT_PROPS", "");
    for (String line : env.split("\n")) {
      int i = line.indexOf('=');
      if (i > 0) props.put(line.substring(0, i).trim(), line.substring(i + 1).trim());
    }
    props.putAll(extra);
    RESTCatalog cat = new RESTCatalog();
    cat.initialize("check", props);
    return cat;
  }

  public static void main(String[] args) throws Exception {
    String uri = args[0], warehouse = args[1];
    Namespace ns = Namespace.of(args[2]);
    TableIdentifier id = TableIdentifier.of(ns, "t");
    Schema schema = new Schema(Types.NestedField.required(1, "id", Types.LongType.get()));
    RESTCatalog cat = step("connect", () -> open(uri, warehouse, Map.of()));
    if (cat == null) {
      System.out.println(passed + " passed, " + failed + " failed");
      System.exit(1);
    }
    step("create namespace", () -> { cat.createNamespace(ns, new HashMap<>(Map.of("owner", "javacheck"))); return null; });
    step("namespace exists", () -> cat.namespaceExists(ns));
    Table t = step("create table", () -> cat.createTable(id, schema, PartitionSpec.unpartitioned()));
    if (t != null) {
      String path = t.location() + "/data/javacheck.bin";
      byte[] bytes = "lakegate".getBytes(StandardCharsets.UTF_8);
      step("write a file with S3FileIO", () -> {
        OutputFile f = t.io().newOutputFile(path);
        try (OutputStream o = f.createOrOverwrite()) { o.write(bytes); }
        return path;
      });
      step("read it back", () -> {
        try (InputStream in = t.io().newInputFile(path).newStream()) {
          return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
      });
      step("append (manifests through S3FileIO)", () -> {
        DataFile df = DataFiles.builder(PartitionSpec.unpartitioned())
            .withPath(path).withFormat(FileFormat.PARQUET)
            .withFileSizeInBytes(bytes.length).withRecordCount(1).build();
        t.newAppend().appendFile(df).commit();
        return null;
      });
      step("reload: data files in the current snapshot", () -> {
        Table r = cat.loadTable(id);
        int n = 0;
        for (var task : r.newScan().planFiles()) n++;
        return n;
      });
      step("table exists", () -> cat.tableExists(id));
      step("list tables", () -> cat.listTables(ns));
    }
    TableIdentifier vid = TableIdentifier.of(ns, "v");
    // Without an endpoints list in /v1/config (Nessie sends none), Iceberg
    // 1.7+ assumes no view support unless view-endpoints-supported=true.
    step("create view, view-endpoints-supported=true", () -> {
      RESTCatalog c2 = open(uri, warehouse, Map.of("view-endpoints-supported", "true"));
      String n = c2.buildView(vid).withSchema(schema).withDefaultNamespace(ns)
          .withQuery("spark", "select 1 as id").createOrReplace().name();
      c2.dropView(vid);
      return n;
    });
    if (t != null) step("drop table (purge)", () -> cat.dropTable(id, true));
    step("drop namespace", () -> cat.dropNamespace(ns));
    cat.close();
    System.out.println(passed + " passed, " + failed + " failed");
    System.exit(failed == 0 ? 0 : 1);
  }
}
