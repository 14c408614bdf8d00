package io.lakegate.interop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.ForbiddenException;
import org.apache.iceberg.exceptions.NotAuthorizedException;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Iceberg's RESTCatalog with OAuth2 client credentials ({@code credential=id:secret}, tokens from
 * lakegate's issuer at the default {uri}/v1/oauth/tokens) against examples/policy/Caddyfile and
 * policies/roles.rego: a reader reads and is refused writes, a writer writes, anonymous callers
 * and wrong secrets are refused. run.sh's {@code policy} target runs only this class (tag
 * oauth2); the catalog suites' targets leave it out.
 */
@Tag("oauth2")
class LakegateOAuth2Test {
  private static final Schema SCHEMA =
      new Schema(
          Types.NestedField.required(1, "id", Types.LongType.get()),
          Types.NestedField.optional(2, "msg", Types.StringType.get()));

  /** A client of the gateway's `local` catalog, with OAuth2 credentials unless null. */
  private static RESTCatalog client(String credential) {
    Map<String, String> props = new HashMap<>();
    props.put(CatalogProperties.URI, System.getProperty("lakegate.uri"));
    props.put(CatalogProperties.WAREHOUSE_LOCATION, System.getProperty("lakegate.warehouse", "local"));
    if (credential != null) {
      props.put("credential", credential);
    }
    RESTCatalog catalog = new RESTCatalog();
    catalog.initialize("lakegate-" + (credential == null ? "anonymous" : credential.split(":")[0]), props);
    return catalog;
  }

  @Test
  void readerReadsAndIsRefusedWrites() throws Exception {
    Namespace ns = Namespace.of("oauth2_" + UUID.randomUUID().toString().substring(0, 8));
    TableIdentifier id = TableIdentifier.of(ns, "events");
    try (RESTCatalog writer = client("writer:writer-secret");
        RESTCatalog reader = client("reader:reader-secret")) {
      writer.createNamespace(ns);
      writer.createTable(id, SCHEMA);

      assertThat(reader.listNamespaces()).contains(ns);
      assertThat(reader.listTables(ns)).containsExactly(id);
      Table readersView = reader.loadTable(id);
      assertThat(readersView.schema().asStruct()).isEqualTo(SCHEMA.asStruct());

      assertThatThrownBy(() -> readersView.updateProperties().set("owner", "reader").commit())
          .isInstanceOf(ForbiddenException.class)
          .hasMessageContaining("updateTable");
      assertThatThrownBy(() -> reader.createTable(TableIdentifier.of(ns, "mine"), SCHEMA))
          .isInstanceOf(ForbiddenException.class);
      assertThatThrownBy(() -> reader.dropTable(id)).isInstanceOf(ForbiddenException.class);
      assertThatThrownBy(() -> reader.createNamespace(Namespace.of(ns.level(0) + "_r")))
          .isInstanceOf(ForbiddenException.class);

      // The refused commit changed nothing; the writer's goes through.
      assertThat(writer.loadTable(id).properties()).doesNotContainKey("owner");
      writer.loadTable(id).updateProperties().set("owner", "writer").commit();
      assertThat(reader.loadTable(id).properties()).containsEntry("owner", "writer");

      assertThat(writer.dropTable(id)).isTrue();
      writer.dropNamespace(ns);
    }
  }

  @Test
  void anonymousCallersAreRefused() {
    assertThatThrownBy(() -> client(null).listNamespaces())
        .isInstanceOf(NotAuthorizedException.class);
  }

  @Test
  void wrongSecretsAreRefused() {
    assertThatThrownBy(() -> client("reader:not-the-secret").listNamespaces())
        .isInstanceOf(NotAuthorizedException.class);
  }
}
