package delta

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/lakegate/lakegate/translate/schema"
)

func parseUUID(s string) (uuid.UUID, error) {
	id, err := uuid.Parse(s)
	if err != nil {
		return uuid.Nil, invalidParam("%q is not a UUID", s)
	}
	return id, nil
}

// order is the order updates apply in, whatever the request's order: the
// protocol and columns first (later updates may name new columns), then
// the partitioning that refers to them, then properties and the rest.
// With at most one update of each kind and disjoint set/remove keys, the
// result does not depend on the order the client sent them in.
var order = []string{
	ActAddCommit, ActSetBackfilled, ActSetProtocol, ActSetColumns, ActSetPartitionColumns, ActSetProperties,
	ActRemoveProperties, ActSetTableComment, ActSetDomainMetadata, ActRemoveDomainMetadata,
	ActUpdateSnapshotVer,
}

// update answers updateTable. Under the table's lock it checks the
// requirements against the current table, then commits the translated
// changes with Iceberg requirements (table uuid, current schema, main
// snapshot) so a change made meanwhile through Iceberg fails the commit
// with 409 instead of being overwritten.
func (s *Service) update(ctx context.Context, ref Ref, req *UpdateTableRequest) (*LoadTableResponse, error) {
	c, err := s.client(ctx, ref.Catalog)
	if err != nil {
		return nil, err
	}
	unlock, err := s.store.Lock(ctx, lockKey(ref))
	if err != nil {
		return nil, Errorf(http.StatusServiceUnavailable, InternalServerError, "could not lock the table for the update: %v", err)
	}
	defer unlock()
	// A data commit reads the commit file and writes manifests: it needs
	// the table's storage credentials.
	l, err := c.load(ctx, ref.Namespace, ref.Name, hasDataCommit(req))
	if err != nil {
		return nil, err
	}
	if err := deltaTable(l.Metadata.Properties(), ref); err != nil {
		return nil, err
	}
	if err := checkRequirementsMet(req, l); err != nil {
		return nil, err
	}
	if err := checkVersions(req, l); err != nil {
		return nil, err
	}
	byAction := map[string]*Update{}
	for i := range req.Updates {
		byAction[req.Updates[i].Action] = &req.Updates[i]
	}
	if err := checkUpdateState(l.Metadata.Properties(), l.Metadata.CurrentSchema(), byAction); err != nil {
		return nil, err
	}
	before := l
	var data *dataCommit
	if u := byAction[ActAddCommit]; u != nil && resent(u, l) {
		delete(byAction, ActAddCommit) // a retry of the ratified latest commit: already applied
	} else if isDataCommit(u) {
		if data, err = s.readDataCommit(ctx, ref, l, u); err != nil {
			return nil, err
		}
	} else if u != nil {
		if l, err = s.moveToUniform(ctx, c, ref, l, u); err != nil {
			return nil, err
		}
	}
	ups, next, err := translateUpdates(l.Metadata, byAction)
	if err == nil && data != nil {
		var more []table.Update
		more, err = dataUpdates(l.Metadata, next, byAction)
		ups = append(ups, more...)
	}
	if err != nil {
		if l != before {
			// The add-commit moved the table, but the request as a whole
			// is refused: undo the move, or the client would be told its
			// commit failed while the table is at its metadata.
			return nil, moveBack(ctx, c, ref, before, err)
		}
		return nil, err
	}
	if data != nil && data.changesFiles() {
		if l, err = data.commit(ctx, c, ref, l, ups); err != nil {
			return nil, err
		}
		return response(l)
	}
	if len(ups) == 0 {
		return response(l)
	}
	moved := l != before
	l, err = c.commit(ctx, ref.Namespace, ref.Name, commitRequirements(l.Metadata), ups, UpdateRequirementConflict)
	if err != nil {
		if moved && AsError(err).Type != CommitStateUnknown {
			// The commit that ratifies the move failed (an Iceberg write came
			// in between): undo the move too. With its outcome unknown, the
			// table is left as it is: moving it back could undo a ratified
			// commit.
			return nil, moveBack(ctx, c, ref, before, err)
		}
		return nil, err
	}
	return response(l)
}

func checkRequirementsMet(req *UpdateTableRequest, l *loaded) error {
	for _, r := range req.Requirements {
		switch r.Type {
		case ReqAssertTableUUID:
			if !strings.EqualFold(*r.UUID, l.Metadata.TableUUID().String()) {
				return Errorf(http.StatusConflict, UpdateRequirementConflict,
					"assert-table-uuid failed: the table's uuid is %s, not %s", l.Metadata.TableUUID(), *r.UUID)
			}
		case ReqAssertEtag:
			if *r.Etag != Etag(l.MetadataLocation) {
				return Errorf(http.StatusConflict, UpdateRequirementConflict,
					"assert-etag failed: the table changed since etag %s was read; reload it and retry", *r.Etag)
			}
		}
	}
	return nil
}

// checkVersions keeps Delta versions moving forward, each kind of table
// the way the spec has it commit: a MANAGED (catalog-managed) table's
// versions are the add-commits the catalog ratifies, exactly the version
// after the latest each (a resend of the latest, at the metadata the table
// already has, is a no-op); an EXTERNAL table commits to its own Delta log
// and reports the version with update-metadata-snapshot-version, which
// never goes back.
func checkVersions(req *UpdateTableRequest, l *loaded) error {
	props := l.Metadata.Properties()
	latest, _ := latestVersion(props)
	kind := props[PropTableType]
	for _, u := range req.Updates {
		switch u.Action {
		case ActAddCommit:
			if kind != Managed {
				return invalidParam("add-commit is for MANAGED tables; an %s table commits to its own Delta log "+
					"and reports the version with update-metadata-snapshot-version", kind)
			}
			v := *u.Commit.Version
			if v != latest+1 && !resent(&u, l) {
				return Errorf(http.StatusConflict, CommitVersionConflict,
					"add-commit of version %d rejected: the table's latest version is %d, so the next commit is %d",
					v, latest, latest+1)
			}
			if n := len(unbackfilled(props)); n >= maxUnbackfilled && !resent(&u, l) {
				return Errorf(http.StatusTooManyRequests, ResourceExhausted,
					"the table has %d unbackfilled commits, the most lakegate keeps: publish them to the Delta log "+
						"and send set-latest-backfilled-version before committing again", n)
			}
		case ActSetBackfilled:
			if kind != Managed {
				return invalidParam("set-latest-backfilled-version is for MANAGED tables, whose commits the catalog ratifies")
			}
			if *u.LatestPublishedVersion > latest {
				return invalidParam("latest-published-version %d is after the latest ratified version %d",
					*u.LatestPublishedVersion, latest)
			}
		case ActUpdateSnapshotVer:
			if kind != External {
				return invalidParam("update-metadata-snapshot-version is for EXTERNAL tables; a %s table's versions "+
					"are its add-commits", kind)
			}
			if *u.LastCommitVersion < latest {
				return Errorf(http.StatusConflict, CommitVersionConflict,
					"last-commit-version %d is before the table's %d: versions never go back", *u.LastCommitVersion, latest)
			}
		}
	}
	return nil
}

// resent reports an add-commit of the latest ratified version with the
// UniForm metadata it was ratified with: a client retrying a commit that
// went through.
func resent(u *Update, l *loaded) bool {
	props := l.Metadata.Properties()
	if v, _ := latestVersion(props); *u.Commit.Version != v {
		return false
	}
	if isDataCommit(u) {
		return *u.Commit.FileName == props[PropLatestCommitFile]
	}
	return u.Uniform.Iceberg.MetadataLocation == props[PropLatestUniform]
}

// commitRequirements pin the state the Delta requirements were checked on.
func commitRequirements(m table.Metadata) []table.Requirement {
	var snap *int64
	if cs := m.CurrentSnapshot(); cs != nil {
		id := cs.SnapshotID
		snap = &id
	}
	return []table.Requirement{
		table.AssertTableUUID(m.TableUUID()),
		table.AssertCurrentSchemaID(m.CurrentSchema().ID),
		table.AssertRefSnapshotID("main", snap),
	}
}

// translateUpdates turns Delta updates into Iceberg ones, in order, and
// returns the schema the table has after them.
func translateUpdates(m table.Metadata, by map[string]*Update) ([]table.Update, *iceberg.Schema, error) {
	set, remove := map[string]string{}, []string{}
	var ups []table.Update
	cur := m.CurrentSchema()
	commits := unbackfilled(m.Properties())
	for _, action := range order {
		u := by[action]
		if u == nil {
			continue
		}
		switch action {
		case ActSetProtocol:
			set[PropProtocol] = encodeProtocol(u.Protocol)
		case ActSetColumns:
			s, more, err := setColumns(m, u.columns, set, &remove)
			if err != nil {
				return nil, nil, err
			}
			cur, ups = s, append(ups, more...)
		case ActSetPartitionColumns:
			more, err := setPartitionColumns(m, cur, u.PartitionColumns)
			if err != nil {
				return nil, nil, err
			}
			ups = append(ups, more...)
		case ActSetProperties:
			for k, v := range u.properties {
				set[k] = v
			}
		case ActRemoveProperties:
			remove = append(remove, u.Removals...)
		case ActSetTableComment:
			if *u.Comment == "" {
				remove = append(remove, PropComment)
			} else {
				set[PropComment] = *u.Comment
			}
		case ActSetDomainMetadata:
			dp, err := domainProps(u.domains)
			if err != nil {
				return nil, nil, err
			}
			for k, v := range dp {
				set[k] = v
			}
		case ActRemoveDomainMetadata:
			for _, d := range u.Domains {
				remove = append(remove, PropDomainPrefix+d)
			}
		case ActUpdateSnapshotVer:
			set[PropLastCommitVersion] = strconv.FormatInt(*u.LastCommitVersion, 10)
			set[PropLastCommitTimestamp] = strconv.FormatInt(*u.LastCommitTimestampMs, 10)
		case ActSetBackfilled:
			// Published commits leave the list; a version already past is a no-op.
			commits = slices.DeleteFunc(commits, func(c Commit) bool { return *c.Version <= *u.LatestPublishedVersion })
			set[PropCommits] = encodeCommits(commits)
		case ActAddCommit:
			// The ratified commit is the latest version, and unbackfilled
			// until a set-latest-backfilled-version says so; it is the last
			// metadata commit only when it changes the metadata.
			commits = append([]Commit{*u.Commit}, commits...)
			set[PropCommits] = encodeCommits(commits)
			set[PropLatestVersion] = strconv.FormatInt(*u.Commit.Version, 10)
			set[PropLatestCommitFile] = *u.Commit.FileName
			if isDataCommit(u) {
				remove = append(remove, PropLatestUniform, PropConvertedTimestamp)
			} else {
				set[PropLatestUniform] = u.Uniform.Iceberg.MetadataLocation
				set[PropConvertedTimestamp] = strconv.FormatInt(*u.Commit.Timestamp, 10)
				if ts := u.Uniform.Iceberg.ConvertedDeltaTimestamp; ts != nil {
					set[PropConvertedTimestamp] = strconv.FormatInt(*ts, 10)
				}
			}
			if changesMetadata(by) {
				set[PropLastCommitVersion] = strconv.FormatInt(*u.Commit.Version, 10)
				set[PropLastCommitTimestamp] = strconv.FormatInt(*u.Commit.Timestamp, 10)
			}
		}
	}
	return appendProps(ups, m, set, remove), cur, nil
}

// metadataActions are the updates that change what a Delta commit's
// metaData or protocol action holds (schema, partitioning, configuration,
// description, protocol). An add-commit sent with one of them is a
// metadata commit, and only those move metadata.last-commit-version
// (delta.lastUpdateVersion): the spec has it track metadata-changing
// commits, while latest-table-version counts data-only ones too. Domain
// metadata is not among them: row tracking moves its high-water mark on
// every data commit.
var metadataActions = []string{
	ActSetProtocol, ActSetColumns, ActSetPartitionColumns, ActSetProperties, ActRemoveProperties, ActSetTableComment,
}

// changesMetadata reports a request that changes the table's metadata.
func changesMetadata(by map[string]*Update) bool {
	return slices.ContainsFunc(metadataActions, func(a string) bool { return by[a] != nil })
}

// appendProps adds the property changes, removing only keys present.
func appendProps(ups []table.Update, m table.Metadata, set map[string]string, remove []string) []table.Update {
	// A key already at its value is no change: a retried request (the
	// same set-latest-backfilled-version again) commits nothing.
	maps.DeleteFunc(set, func(k, v string) bool { cur, ok := m.Properties()[k]; return ok && cur == v })
	if len(set) > 0 {
		ups = append(ups, table.NewSetPropertiesUpdate(set))
	}
	var present []string
	for _, k := range remove {
		if _, ok := m.Properties()[k]; ok && !slices.Contains(present, k) {
			present = append(present, k)
		}
	}
	if len(present) > 0 {
		ups = append(ups, table.NewRemovePropertiesUpdate(present))
	}
	return ups
}

// setColumns evolves the schema keeping field ids by name; a partition
// source column cannot be dropped.
func setColumns(m table.Metadata, cols schema.StructType, set map[string]string, remove *[]string) (*iceberg.Schema, []table.Update, error) {
	next, err := evolve(m.CurrentSchema(), m.LastColumnID(), cols, m.Properties(), hasData(m))
	if err != nil {
		return nil, nil, invalidParam("set-columns: %v", err)
	}
	spec := m.PartitionSpec()
	for _, pf := range spec.Fields() {
		for _, id := range pf.SourceIDs {
			if _, ok := next.FindFieldByID(id); !ok {
				return nil, nil, invalidParam("set-columns: column %q is a partition column and cannot be dropped", pf.Name)
			}
		}
	}
	ex, err := extras(cols, next)
	if err != nil {
		return nil, nil, err
	}
	if ex != "" {
		set[PropColumns] = ex
	} else {
		*remove = append(*remove, PropColumns)
	}
	return next, []table.Update{table.NewAddSchemaUpdate(next), table.NewSetCurrentSchemaUpdate(-1)}, nil
}

// hasData reports a table whose current snapshot holds rows (or does not
// say how many it holds).
func hasData(m table.Metadata) bool {
	cs := m.CurrentSnapshot()
	if cs == nil {
		return false
	}
	if cs.Summary == nil {
		return true
	}
	n, ok := cs.Summary.Properties["total-records"]
	return !ok || n != "0"
}

// setPartitionColumns replaces the spec, which Delta allows only before any
// data is written: an Iceberg table with no snapshot.
func setPartitionColumns(m table.Metadata, s *iceberg.Schema, cols []string) ([]table.Update, error) {
	if m.CurrentSnapshot() != nil {
		return nil, invalidParam("set-partition-columns: the table already has data; partition columns can only change while it is empty")
	}
	seen := map[string]bool{}
	for _, c := range cols {
		if seen[strings.ToLower(c)] {
			return nil, invalidParam("partition column %q is listed twice", c)
		}
		seen[strings.ToLower(c)] = true
	}
	spec, err := schema.IdentitySpec(s, cols)
	if err != nil {
		return nil, invalidParam("set-partition-columns: %v", err)
	}
	spec, err = renumberSpec(spec, s, m)
	if err != nil {
		return nil, invalidParam("set-partition-columns: %v", err)
	}
	return []table.Update{table.NewAddPartitionSpecUpdate(&spec, false), table.NewSetDefaultSpecUpdate(-1)}, nil
}

// renumberSpec gives a new spec's fields ids after the table's last
// partition id, as Iceberg requires for fields new to the table.
func renumberSpec(spec iceberg.PartitionSpec, s *iceberg.Schema, m table.Metadata) (iceberg.PartitionSpec, error) {
	last := iceberg.PartitionDataIDStart - 1
	if p := m.LastPartitionSpecID(); p != nil {
		last = max(last, *p)
	}
	for _, ps := range m.PartitionSpecs() {
		last = max(last, ps.LastAssignedFieldID())
	}
	var opts []iceberg.PartitionOption
	for _, f := range spec.Fields() {
		last++
		id := last
		opts = append(opts, iceberg.AddPartitionFieldBySourceID(f.SourceIDs[0], f.Name, f.Transform, s, &id))
	}
	return iceberg.NewPartitionSpecOpts(opts...)
}
