package gateway

import (
	"fmt"
	"html/template"
	"strconv"
	"strings"
	"time"

	"github.com/lakegate/lakegate/telemetry"
)

// chart is one sparkline of a catalog's recent points on the status page:
// inline SVG, so the page needs no script or external asset.
type chart struct {
	Title string
	Last  string // the newest measured value, formatted
	SVG   template.HTML
}

const chartW, chartH = 150.0, 28.0

// Charts are the sparklines of the catalog's last minutes.
func (s catalogStatus) Charts() []chart {
	rate := func(p telemetry.Point) *float64 { v := p.RequestsPerSecond; return &v }
	return []chart{
		sparkline("requests/s", s.History, rate, func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }),
		sparkline("5xx ratio", s.History, func(p telemetry.Point) *float64 { return p.ErrorRatio }, ratioText),
		sparkline("backend p50", s.History, func(p telemetry.Point) *float64 { return p.BackendP50 }, secondsText),
		sparkline("backend p99", s.History, func(p telemetry.Point) *float64 { return p.BackendP99 }, secondsText),
		sparkline("cache hit ratio", s.History, func(p telemetry.Point) *float64 { return p.CacheHitRatio }, ratioText),
	}
}

func ratioText(v float64) string { return percent(&v) }

func secondsText(v float64) string {
	return time.Duration(v * float64(time.Second)).Round(10 * time.Microsecond).String()
}

// sparkline draws the values of pts against the window's full width (the
// newest at the right edge), scaled to the largest value; an interval
// without a value breaks the line.
func sparkline(title string, pts []telemetry.Point, value func(telemetry.Point) *float64, format func(float64) string) chart {
	c := chart{Title: title, Last: "n/a"}
	top := 0.0
	for _, p := range pts {
		if v := value(p); v != nil {
			top = max(top, *v)
			c.Last = format(*v)
		}
	}
	step := chartW / float64(telemetry.HistoryPoints-1)
	offset := float64(telemetry.HistoryPoints - len(pts))
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="spark" width="%g" height="%g" viewBox="0 0 %g %g" role="img"><title>%s, last %d intervals of %s</title>`,
		chartW, chartH, chartW, chartH, template.HTMLEscapeString(title), len(pts), telemetry.HistoryInterval)
	var line []string
	flush := func() {
		if len(line) > 0 {
			fmt.Fprintf(&b, `<polyline points="%s"/>`, strings.Join(line, " "))
			line = line[:0]
		}
	}
	for i, p := range pts {
		v := value(p)
		if v == nil {
			flush()
			continue
		}
		y := chartH - 1
		if top > 0 {
			y = 1 + (chartH-2)*(1-*v/top)
		}
		line = append(line, fmt.Sprintf("%.1f,%.1f", (offset+float64(i))*step, y))
	}
	flush()
	b.WriteString(`</svg>`)
	c.SVG = template.HTML(b.String()) //nolint:gosec // built above from numbers and an escaped title
	return c
}
