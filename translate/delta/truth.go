package delta

// LogIsTruth reports a table whose truth is its Delta log: an EXTERNAL
// Delta table that is not UniForm (its engines commit to _delta_log and
// never tell the catalog; lakegate keeps its Iceberg side in step). Other
// doors (Delta Sharing) read such a table's versions, files and partition
// values from the log, not from the Iceberg side, which only approximates
// it. The same predicate the EXTERNAL sync decides by.
func LogIsTruth(props map[string]string) bool {
	return logSynced(props)
}
