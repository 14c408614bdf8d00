// Package deltalog reads a Delta table's transaction log (`<location>/_delta_log/`)
// and computes its snapshot at the latest version or at a given one: the
// protocol and metaData in force, the commit timestamps, and the active add
// files with removes applied.
//
// It is the reading half of giving EXTERNAL Delta tables an Iceberg side:
// their engines commit straight to the log and never tell the catalog, so
// lakegate must read the log to know the table's state. It follows Delta's
// PROTOCOL.md (shared/specs/delta-table-protocol.md); comments cite its
// sections by name.
//
// What is read: JSON commits (NNNNNNNNNNNNNNNNNNNN.json), classic and
// multi-part parquet checkpoints, UUID-named V2 checkpoints (JSON or parquet)
// with their sidecars, and `_last_checkpoint` as a hint. What is not: log
// compaction files (optional for readers, "Log Compaction Files"), version
// checksum files, and `_delta_log/_staged_commits` (for catalog-managed
// tables the catalog says which staged commits are ratified, "Reading
// Catalog-managed Tables"; lakegate's Delta API reads those itself).
//
// The log is untrusted input: every file is read under Limits, a malformed
// action is an error naming the file and line (or row), and nothing in here
// panics on bad input (parquet decoding runs under recover, since arrow-go
// may panic on corrupt files).
package deltalog
