package io.lakegate.interop;

import java.util.Map;
import org.apache.iceberg.catalog.CatalogTests;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.rest.RESTCatalog;
import org.junit.jupiter.api.BeforeEach;

/** Iceberg's CatalogTests (iceberg-core 1.11.0) through RESTCatalog. */
public class LakegateCatalogTest extends CatalogTests<RESTCatalog> {
  @BeforeEach
  void emptyCatalog() {
    LakegateCatalogs.emptyBeforeTest();
  }

  @Override
  protected RESTCatalog catalog() {
    return LakegateCatalogs.shared();
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
