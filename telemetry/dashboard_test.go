package telemetry

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// family is one metric lakegate exports, as a query may name it.
type family struct {
	labels    []string
	histogram bool
}

// exported are lakegate's metric families, from the collectors' own
// descriptions (the label names are only printed there).
func exported(t *testing.T) map[string]family {
	t.Helper()
	descRe := regexp.MustCompile(`fqName: "([^"]+)".*variableLabels: \{([^}]*)\}`)
	out := map[string]family{}
	for _, c := range collectors {
		_, histogram := c.(*prometheus.HistogramVec)
		ch := make(chan *prometheus.Desc, 4)
		c.Describe(ch)
		close(ch)
		for d := range ch {
			m := descRe.FindStringSubmatch(d.String())
			require.NotNil(t, m, d.String())
			out[m[1]] = family{labels: strings.Split(m[2], ","), histogram: histogram}
		}
	}
	return out
}

var (
	metricRe   = regexp.MustCompile(`\b(lakegate_[a-z_]+)(\{[^}]*\})?`)
	matcherRe  = regexp.MustCompile(`(\w+)\s*(?:=~|!=|!~|=)`)
	groupingRe = regexp.MustCompile(`\b(?:by|without)\s*\(([^)]*)\)`)
	labelFnRe  = regexp.MustCompile(`label_values\((lakegate_[a-z_]+),\s*(\w+)\)`)
)

// Every query of the Grafana dashboard shipped in docs/grafana names a
// metric lakegate exports, and only labels that metric has: a renamed
// metric or label fails here, not on an operator's screen.
func TestDashboardQueriesNameExportedSeries(t *testing.T) {
	fams := exported(t)
	raw, err := os.ReadFile("../docs/grafana/lakegate.json")
	require.NoError(t, err)
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	require.NoError(t, json.Unmarshal(raw, &dash))
	require.NotEmpty(t, dash.Panels)
	queries := 0
	for _, p := range dash.Panels {
		require.NotEmpty(t, p.Targets, p.Title)
		for _, tg := range p.Targets {
			checkQuery(t, fams, p.Title, tg.Expr)
			queries++
		}
	}
	for _, v := range dash.Templating.List {
		for _, m := range labelFnRe.FindAllStringSubmatch(v.Definition, -1) {
			f, ok := fams[m[1]]
			assert.True(t, ok, "variable: %s is not exported", m[1])
			assert.Contains(t, f.labels, m[2], "variable: %s has no label %s", m[1], m[2])
		}
	}
	t.Logf("%d panels, %d queries", len(dash.Panels), queries)
}

// checkQuery checks the metrics and labels one PromQL expression names.
func checkQuery(t *testing.T, fams map[string]family, panel, expr string) {
	t.Helper()
	uses := metricRe.FindAllStringSubmatch(expr, -1)
	require.NotEmpty(t, uses, "%s: %s names no lakegate metric", panel, expr)
	var labels []string // labels every metric of the expression has
	for i, u := range uses {
		f, ok := lookup(fams, u[1])
		if !assert.True(t, ok, "%s: %s is not a metric lakegate exports", panel, u[1]) {
			continue
		}
		for _, m := range matcherRe.FindAllStringSubmatch(u[2], -1) {
			assert.Contains(t, f.labels, m[1], "%s: %s has no label %q", panel, u[1], m[1])
		}
		have := f.labels
		if strings.HasSuffix(u[1], "_bucket") {
			have = append(slices.Clone(have), "le")
		}
		if i == 0 {
			labels = have
		} else {
			labels = slices.DeleteFunc(labels, func(l string) bool { return !slices.Contains(have, l) })
		}
	}
	for _, g := range groupingRe.FindAllStringSubmatch(expr, -1) {
		for _, l := range strings.Split(g[1], ",") {
			assert.Contains(t, labels, strings.TrimSpace(l), "%s: %s groups by a label its metrics lack", panel, expr)
		}
	}
}

// lookup finds a metric by the name a query uses: a histogram's series
// carry _bucket, _count or _sum.
func lookup(fams map[string]family, name string) (family, bool) {
	if f, ok := fams[name]; ok && !f.histogram {
		return f, true
	}
	for _, suffix := range []string{"_bucket", "_count", "_sum"} {
		if f, ok := fams[strings.TrimSuffix(name, suffix)]; ok && f.histogram && strings.HasSuffix(name, suffix) {
			return f, true
		}
	}
	return family{}, false
}
