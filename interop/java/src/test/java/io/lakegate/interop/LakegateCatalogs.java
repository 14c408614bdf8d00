package io.lakegate.interop;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.NoSuchViewException;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.util.LocationUtil;

/**
 * Builds the RESTCatalog clients the suites run through, and empties the catalog between tests.
 *
 * <p>Configuration comes from system properties (run.sh passes them to Maven, surefire passes
 * them on to the test JVM):
 *
 * <ul>
 *   <li>{@code lakegate.uri} (required): the catalog's base URL, e.g. http://127.0.0.1:20181
 *   <li>{@code lakegate.warehouse}: the {@code warehouse} sent to /v1/config (a lakegate catalog
 *       name; empty or absent for a server that needs none)
 *   <li>{@code lakegate.catalog.KEY=VALUE}: any further client catalog property, e.g. {@code
 *       lakegate.catalog.io-impl=org.apache.iceberg.aws.s3.S3FileIO}, {@code
 *       lakegate.catalog.s3.endpoint=...}
 *   <li>{@code lakegate.location}: base location for the tests that choose a table or view
 *       location themselves (default: Iceberg's own, file:/tmp for tables and a JUnit temporary
 *       folder for views)
 *   <li>{@code lakegate.capability.NAME=true|false}: overrides a capability hook (see {@link
 *       Capabilities}); run.sh sets none by default.
 *   <li>{@code lakegate.wipe} (default true): empty the whole catalog before each test.
 * </ul>
 */
final class LakegateCatalogs {
  static final String PREFIX = "lakegate.";
  static final String CATALOG_PREFIX = PREFIX + "catalog.";

  private LakegateCatalogs() {}

  /** The client properties every catalog of the suites gets. */
  static Map<String, String> baseProperties() {
    Map<String, String> props = new HashMap<>();
    String uri = System.getProperty(PREFIX + "uri");
    if (uri == null || uri.isEmpty()) {
      throw new IllegalStateException("set -Dlakegate.uri=http://host:port (the catalog's base URL)");
    }
    props.put(CatalogProperties.URI, uri);
    String warehouse = System.getProperty(PREFIX + "warehouse", "");
    if (!warehouse.isEmpty()) {
      props.put(CatalogProperties.WAREHOUSE_LOCATION, warehouse);
    }

    // What the suites assert: a table or view created through this client gets
    // the client's table-default.* / view-default.* properties unless it sets
    // them itself, and always the *-override.* ones.
    props.put(CatalogProperties.TABLE_DEFAULT_PREFIX + "default-key1", "catalog-default-key1");
    props.put(CatalogProperties.TABLE_DEFAULT_PREFIX + "default-key2", "catalog-default-key2");
    props.put(CatalogProperties.TABLE_DEFAULT_PREFIX + "override-key3", "catalog-default-key3");
    props.put(CatalogProperties.TABLE_OVERRIDE_PREFIX + "override-key3", "catalog-override-key3");
    props.put(CatalogProperties.TABLE_OVERRIDE_PREFIX + "override-key4", "catalog-override-key4");
    props.put(CatalogProperties.VIEW_DEFAULT_PREFIX + "key1", "catalog-default-key1");
    props.put(CatalogProperties.VIEW_DEFAULT_PREFIX + "key2", "catalog-default-key2");
    props.put(CatalogProperties.VIEW_DEFAULT_PREFIX + "key3", "catalog-default-key3");
    props.put(CatalogProperties.VIEW_OVERRIDE_PREFIX + "key3", "catalog-override-key3");
    props.put(CatalogProperties.VIEW_OVERRIDE_PREFIX + "key4", "catalog-override-key4");

    // Extra client properties win over the defaults above.
    for (String name : System.getProperties().stringPropertyNames()) {
      if (name.startsWith(CATALOG_PREFIX)) {
        props.put(name.substring(CATALOG_PREFIX.length()), System.getProperty(name));
      }
    }
    return props;
  }

  static RESTCatalog open(String name, Map<String, String> additional) {
    Map<String, String> props = baseProperties();
    props.putAll(additional);
    RESTCatalog catalog = new RESTCatalog();
    catalog.setConf(new Configuration());
    catalog.initialize(name, props);
    return catalog;
  }

  private static RESTCatalog shared;

  /**
   * The client both suites run through, opened on first use and kept for the test JVM's life
   * (surefire forks one JVM for the run; its exit drops the connections).
   */
  static synchronized RESTCatalog shared() {
    if (shared == null) {
      shared = open("interop", Map.of());
    }
    return shared;
  }

  /** Empties the catalog before a test; a failure to clean is printed (see {@link #wipe}). */
  static void emptyBeforeTest() {
    try {
      wipe(shared());
    } catch (RuntimeException e) {
      System.err.println("WARN: could not empty the catalog before the test: " + e);
    }
  }

  /** Base for client-chosen locations, or null for the suite's own default. */
  static String location(String... parts) {
    String base = System.getProperty(PREFIX + "location", "");
    if (base.isEmpty()) {
      return null;
    }
    StringBuilder location = new StringBuilder(LocationUtil.stripTrailingSlash(base));
    for (String part : parts) {
      location.append('/').append(part);
    }
    return location.toString();
  }

  static boolean wipeEnabled() {
    return Boolean.parseBoolean(System.getProperty(PREFIX + "wipe", "true"));
  }

  /**
   * Drops every view, table and namespace of the catalog, deepest namespaces first. The catalog
   * is dedicated to this run (run.sh starts every backend empty), so a test that failed half-way
   * cannot leave entries that make the next test fail. Like Iceberg's RCK, a failure to clean
   * is printed (to the test's output file) and the test then runs anyway: the test itself will
   * show what is wrong, without one broken drop failing every later test in setup.
   */
  static void wipe(RESTCatalog catalog) {
    if (!wipeEnabled()) {
      return;
    }
    List<Namespace> all = new ArrayList<>();
    collect(catalog, Namespace.empty(), all);
    // children were added after their parents: drop in reverse order
    RuntimeException failure = null;
    for (int i = all.size() - 1; i >= 0; i--) {
      Namespace ns = all.get(i);
      try {
        for (TableIdentifier view : catalog.listViews(ns)) {
          try {
            catalog.dropView(view);
          } catch (NoSuchViewException e) {
            // gone meanwhile
          }
        }
        for (TableIdentifier table : catalog.listTables(ns)) {
          try {
            catalog.dropTable(table, false);
          } catch (NoSuchTableException e) {
            // gone meanwhile
          }
        }
        catalog.dropNamespace(ns);
      } catch (NoSuchNamespaceException e) {
        // gone meanwhile
      } catch (RuntimeException e) {
        if (failure == null) {
          failure = new IllegalStateException("could not empty the catalog (namespace " + ns + ")", e);
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (failure != null) {
      System.err.println("WARN: " + failure);
      failure.printStackTrace();
    }
  }

  private static void collect(RESTCatalog catalog, Namespace parent, List<Namespace> out) {
    List<Namespace> children;
    try {
      children = catalog.listNamespaces(parent);
    } catch (RuntimeException e) {
      if (parent.isEmpty()) {
        throw e;
      }
      System.err.println("WARN: cannot list namespaces under " + parent + ": " + e);
      return;
    }
    for (Namespace child : children) {
      out.add(child);
      collect(catalog, child, out);
    }
  }
}
