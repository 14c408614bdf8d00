package io.lakegate.interop;

/**
 * The answers both suites get from their capability hooks: what the Iceberg REST catalog
 * protocol lets a server do, for every target alike. A backend that cannot do one of these
 * (e.g. the JDBC catalog behind the reference server cannot store a namespace name containing a
 * dot) shows it as failing tests, which run.sh checks against expected-failures.txt, rather
 * than as tests turned off here.
 *
 * <p>{@code -Dlakegate.capability.NAME=true|false} overrides one (NAME as below); run.sh sets
 * none.
 */
final class Capabilities {
  private Capabilities() {}

  private static boolean get(String name, boolean protocolDefault) {
    String value = System.getProperty(LakegateCatalogs.PREFIX + "capability." + name);
    return value == null ? protocolDefault : Boolean.parseBoolean(value);
  }

  /** Namespaces carry properties (create with properties, load, update, remove). */
  static boolean namespaceProperties() {
    return get("namespace-properties", true);
  }

  /** Multi-level namespaces: the protocol sends levels joined by 0x1F and has `parent`. */
  static boolean nestedNamespaces() {
    return get("nested-namespaces", true);
  }

  /** A REST catalog never creates a namespace implicitly when a table is created. */
  static boolean requiresNamespaceCreate() {
    return get("requires-namespace-create", true);
  }

  /**
   * Commits carry requirements that the server checks (and answers 409 CommitFailedException
   * "Requirement failed: ..."), so a client's stale-metadata commit is retried or rejected on the
   * server side rather than by a client-side compare-and-swap.
   */
  static boolean serverSideRetry() {
    return get("server-side-retry", true);
  }

  /** A server may ignore a requested table/view location; the REST protocol lets it choose. */
  static boolean overridesRequestedLocation() {
    return get("overrides-requested-location", false);
  }

  /** Names are percent-encoded path segments, so '/' is a legal character. */
  static boolean namesWithSlashes() {
    return get("names-with-slashes", true);
  }

  /** Levels are joined by 0x1F, not '.', so '.' is a legal character in a level. */
  static boolean namesWithDot() {
    return get("names-with-dot", true);
  }

  /** The empty namespace cannot be written as a {namespace} path segment. */
  static boolean emptyNamespace() {
    return get("empty-namespace", false);
  }
}
