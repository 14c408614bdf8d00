package embedded

// Server-side scan planning: planTableScan, fetchPlanningResult,
// cancelPlanning and fetchScanTasks. Planning is synchronous (iceberg-go
// plans a snapshot in one call), so every plan answers "completed" at once;
// large plans are split into plan-tasks that fetchScanTasks resolves from
// the in-memory planStore.

import (
	"net/http"
	"strings"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/lakegate/lakegate/upstream/icerest"
)

// FilesPerPlanTaskProperty is the catalog property (Config.Properties)
// bounding how many file scan tasks one response carries. Plans with more
// files are answered with plan-tasks, each resolved by fetchScanTasks, so no
// single response grows without bound.
const FilesPerPlanTaskProperty = "lakegate.scan-planning.files-per-task"

const defaultFilesPerPlanTask = 1000

// Plan store bounds: a plan lives long enough for a client to fetch its
// tasks, and the store never holds more than a fixed number of plans or
// bytes of encoded tasks, whatever clients submit.
const (
	planTTL        = 10 * time.Minute
	maxStoredPlans = 256
	maxStoredBytes = 128 << 20
)

// ---------------------------------------------------------------------------
// Handlers

func (c *Catalog) planTableScan(w http.ResponseWriter, r *http.Request, rt icerest.Route) error {
	req, err := readPlanRequest(r)
	if err != nil {
		return err
	}
	id := ident(rt.Namespace, rt.Table)
	tbl, err := c.openTable(r.Context(), id)
	if err != nil {
		return err
	}
	scan, err := req.resolve(tbl.Metadata())
	if err != nil {
		return err
	}
	tasks, err := scan.planFiles(r.Context(), tbl)
	if err != nil {
		return err
	}
	planID, inline, err := c.keepPlan(id, tbl, scan.statsIDs, wholeFileTasks(tasks))
	if err != nil {
		return err
	}
	icerest.WriteJSON(w, http.StatusOK, completedResult{
		Status:             "completed",
		PlanID:             planID,
		encodedTasks:       inline,
		StorageCredentials: c.vendedCredentials(r, tbl.Location()),
	})
	return nil
}

// keepPlan encodes a plan's tasks, stores them for fetchPlanningResult and
// fetchScanTasks, and returns the plan id and the envelope to answer with.
func (c *Catalog) keepPlan(id table.Identifier, tbl *table.Table, statsIDs map[int]bool, tasks []table.FileScanTask) (string, encodedTasks, error) {
	enc := newFileEncoder(tbl.Metadata(), statsIDs)
	envelopes, err := encodeEnvelopes(tasks, enc, c.filesPerPlanTask())
	if err != nil {
		return "", encodedTasks{}, err
	}
	planID, inline, stored, err := c.plans.add(tableKey(id), tbl.Location(), envelopes)
	if err != nil || stored || len(envelopes) == 1 {
		return planID, inline, err
	}
	// Too large to keep: plan-tasks nobody could fetch would be useless, so
	// answer with every task inline instead.
	inline, err = enc.envelope(tasks)
	return planID, inline, err
}

// fetchPlanningResult returns the completed result of a plan again; plans
// complete synchronously, so there is never a "submitted" state to report.
func (c *Catalog) fetchPlanningResult(w http.ResponseWriter, r *http.Request, rt icerest.Route) error {
	p, ok := c.plans.plan(tableKey(ident(rt.Namespace, rt.Table)), rt.PlanID)
	if !ok {
		return noSuchPlan(rt.PlanID)
	}
	icerest.WriteJSON(w, http.StatusOK, completedResult{
		Status:             "completed",
		encodedTasks:       p.result,
		StorageCredentials: c.vendedCredentials(r, p.location),
	})
	return nil
}

// cancelPlanning releases a plan and its plan-tasks.
func (c *Catalog) cancelPlanning(w http.ResponseWriter, _ *http.Request, rt icerest.Route) error {
	if !c.plans.cancel(tableKey(ident(rt.Namespace, rt.Table)), rt.PlanID) {
		return noSuchPlan(rt.PlanID)
	}
	writeNoContent(w)
	return nil
}

func (c *Catalog) fetchScanTasks(w http.ResponseWriter, r *http.Request, rt icerest.Route) error {
	var req struct {
		PlanTask *string `json:"plan-task"`
	}
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	if req.PlanTask == nil || *req.PlanTask == "" {
		return badRequest("fetch scan tasks needs a plan-task")
	}
	tasks, ok := c.plans.task(tableKey(ident(rt.Namespace, rt.Table)), *req.PlanTask)
	if !ok {
		return icerest.Errorf(http.StatusNotFound, icerest.NoSuchPlanTask,
			"plan task %q does not exist (unknown, expired or cancelled)", *req.PlanTask)
	}
	icerest.WriteJSON(w, http.StatusOK, tasks)
	return nil
}

func noSuchPlan(id string) error {
	return icerest.Errorf(http.StatusNotFound, icerest.NoSuchPlanID,
		"plan %q does not exist (unknown, expired or cancelled)", id)
}

// filesPerPlanTask reads FilesPerPlanTaskProperty; nonsense values fall
// back to the default rather than failing every plan.
func (c *Catalog) filesPerPlanTask() int {
	n := c.props.GetInt(FilesPerPlanTaskProperty, defaultFilesPerPlanTask)
	if n < 1 {
		return defaultFilesPerPlanTask
	}
	return n
}

// tableKey scopes plan ids and plan-tasks to the table they were planned
// for, so a handle cannot be replayed against another table's endpoint.
func tableKey(id table.Identifier) string { return strings.Join(id, "\x00") }
