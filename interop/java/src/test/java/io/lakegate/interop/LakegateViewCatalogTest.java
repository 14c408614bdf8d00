package io.lakegate.interop;

import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.view.ViewCatalogTests;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/** Iceberg's ViewCatalogTests (iceberg-core 1.11.0) through RESTCatalog. */
public class LakegateViewCatalogTest extends ViewCatalogTests<RESTCatalog> {
  private static RESTCatalog catalog;

  @BeforeAll
  static void openCatalog() {
    catalog = LakegateCatalogs.open();
  }

  @AfterAll
  static void closeCatalog() throws Exception {
    if (catalog != null) {
      catalog.close();
    }
  }

  @BeforeEach
  void emptyCatalog() {
    try {
      LakegateCatalogs.wipe(catalog);
    } catch (RuntimeException e) {
      System.err.println("WARN: could not empty the catalog before the test: " + e);
    }
  }

  @Override
  protected RESTCatalog catalog() {
    return catalog;
  }

  @Override
  protected Catalog tableCatalog() {
    return catalog;
  }

  @Override
  protected String viewLocation(String... paths) {
    String location = LakegateCatalogs.location(prepend("views", paths));
    return location != null ? location : super.viewLocation(paths);
  }

  private static String[] prepend(String first, String[] rest) {
    String[] all = new String[rest.length + 1];
    all[0] = first;
    System.arraycopy(rest, 0, all, 1, rest.length);
    return all;
  }

  @Override
  protected boolean requiresNamespaceCreate() {
    return Capabilities.requiresNamespaceCreate();
  }

  @Override
  protected boolean overridesRequestedLocation() {
    return Capabilities.overridesRequestedLocation();
  }

  @Override
  protected boolean supportsServerSideRetry() {
    return Capabilities.serverSideRetry();
  }

  @Override
  protected boolean supportsEmptyNamespace() {
    return Capabilities.emptyNamespace();
  }
}
