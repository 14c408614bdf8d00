package io.lakegate.interop;

import java.util.Map;
import org.apache.iceberg.catalog.CatalogTests;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.rest.RESTCatalog;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/** Iceberg's CatalogTests (iceberg-core 1.11.0) through RESTCatalog. */
public class LakegateCatalogTest extends CatalogTests<RESTCatalog> {
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
  protected RESTCatalog initCatalog(String catalogName, Map<String, String> additionalProperties) {
    return LakegateCatalogs.open(catalogName, additionalProperties);
  }

  @Override
  protected String baseTableLocation(TableIdentifier identifier) {
    String location =
        LakegateCatalogs.location(identifier.namespace().toString(), identifier.name());
    return location != null ? location : super.baseTableLocation(identifier);
  }

  @Override
  protected boolean supportsNamespaceProperties() {
    return Capabilities.namespaceProperties();
  }

  @Override
  protected boolean supportsNestedNamespaces() {
    return Capabilities.nestedNamespaces();
  }

  @Override
  protected boolean requiresNamespaceCreate() {
    return Capabilities.requiresNamespaceCreate();
  }

  @Override
  protected boolean supportsServerSideRetry() {
    return Capabilities.serverSideRetry();
  }

  @Override
  protected boolean overridesRequestedLocation() {
    return Capabilities.overridesRequestedLocation();
  }

  @Override
  protected boolean supportsNamesWithSlashes() {
    return Capabilities.namesWithSlashes();
  }

  @Override
  protected boolean supportsNamesWithDot() {
    return Capabilities.namesWithDot();
  }

  @Override
  protected boolean supportsEmptyNamespace() {
    return Capabilities.emptyNamespace();
  }
}
