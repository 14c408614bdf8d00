package io.lakegate.interop;

import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.view.ViewCatalogTests;
import org.junit.jupiter.api.BeforeEach;

/** Iceberg's ViewCatalogTests (iceberg-core 1.11.0) through RESTCatalog. */
public class LakegateViewCatalogTest extends ViewCatalogTests<RESTCatalog> {
  @BeforeEach
  void emptyCatalog() {
    LakegateCatalogs.emptyBeforeTest();
  }

  @Override
  protected RESTCatalog catalog() {
    return LakegateCatalogs.shared();
  }

  @Override
  protected Catalog tableCatalog() {
    return LakegateCatalogs.shared();
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
