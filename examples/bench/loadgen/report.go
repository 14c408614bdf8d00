package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// The files examples/bench/run.sh writes to the -report DIR:
//
//	runs.tsv          one line per measured run, in the order measured:
//	                  name, front process, other processes (comma list or
//	                  "-"), label; tab-separated
//	RUN-N.json        round N of run RUN (the load mode's output)
//	cpu-RUN-N.txt     "hz <ticks per second>", then "<process> <ticks>"
//	                  lines: CPU (user+system) each process used in the
//	                  measured window of RUN-N
//	skipped.tsv       target, reason: targets the run could not measure
//
// The comparisons below name runs of runs.tsv; a comparison whose runs
// are missing (a TARGETS subset) is left out.

// comparison is one row of the target table: lakegate's run against a
// baseline measured in the same rounds.
type comparison struct {
	target   string  // as in TARGETS
	label    string  // the target column
	lakegate string  // run names
	baseline string  //
	minRatio float64 // goal: lakegate rps / baseline rps at least this (0: none)
	maxCPU   float64 // goal: lakegate CPU/req / baseline CPU/req at most this (0: none)
}

var comparisons = []comparison{
	{"proxy", "proxy: lakegate `remote`, no cache", "proxy", "nginx", 0.95, 1.5},
	{"proxy", "proxy: lakegate `remote`, no cache", "proxy", "caddy", 0, 0},
	{"proxy", "proxy: lakegate `remote`, no cache", "proxy", "direct", 0, 0},
	{"revalidate", "revalidate: cache max_age 0s, backend with ETags", "reval", "nginx", 0.9, 0},
	{"revalidate", "revalidate: cache max_age 0s, backend without ETags", "reval-noetag", "nginx-noetag", 0.9, 0},
	{"l1", "l1: cache max_age 1h (L1 hit)", "l1", "mem", 0.8, 0},
	{"l2", "l2: Redis hit, L1 holds nothing", "l2", "direct", 10, 0},
}

// runInfo is one line of runs.tsv with its rounds.
type runInfo struct {
	name, front, label string
	others             []string
	rounds             map[int]*measured
}

// measured is one round of one run.
type measured struct {
	Result
	cpuUs map[string]float64 // CPU µs per completed request, by process
}

func readRuns(dir string) ([]*runInfo, map[string]*runInfo, error) {
	f, err := os.Open(filepath.Join(dir, "runs.tsv"))
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var list []*runInfo
	byName := map[string]*runInfo{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) != 4 {
			continue
		}
		r := &runInfo{name: fields[0], front: fields[1], label: fields[3], rounds: map[int]*measured{}}
		if fields[2] != "-" && fields[2] != "" {
			r.others = strings.Split(fields[2], ",")
		}
		paths, err := filepath.Glob(filepath.Join(dir, r.name+"-*.json"))
		if err != nil {
			return nil, nil, err
		}
		for _, p := range paths {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), r.name+"-"), ".json"))
			if err != nil {
				continue // another run's file (nginx-noetag-1.json for nginx)
			}
			m, err := readMeasured(dir, r.name, n)
			if err != nil {
				return nil, nil, err
			}
			r.rounds[n] = m
		}
		list = append(list, r)
		byName[r.name] = r
	}
	if err := sc.Err(); err != nil {
		return nil, nil, err
	}
	return list, byName, nil
}

func readMeasured(dir, name string, n int) (*measured, error) {
	p := filepath.Join(dir, fmt.Sprintf("%s-%d.json", name, n))
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	m := &measured{cpuUs: map[string]float64{}}
	if err := json.Unmarshal(b, &m.Result); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	c, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("cpu-%s-%d.txt", name, n)))
	if err != nil || m.Requests == 0 {
		return m, nil
	}
	ticks := map[string]float64{}
	hz := 0.0
	for _, line := range strings.Split(string(c), "\n") {
		var k string
		var v float64
		if n, _ := fmt.Sscan(line, &k, &v); n == 2 {
			if k == "hz" {
				hz = v
			} else {
				ticks[k] = v
			}
		}
	}
	if hz > 0 {
		for k, v := range ticks {
			m.cpuUs[k] = v / hz * 1e6 / float64(m.Requests)
		}
	}
	return m, nil
}

func readSkipped(dir string) map[string]string {
	out := map[string]string{}
	b, err := os.ReadFile(filepath.Join(dir, "skipped.tsv"))
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "\t"); ok {
			out[k] = v
		}
	}
	return out
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	v = append([]float64(nil), v...)
	sort.Float64s(v)
	if n := len(v); n%2 == 0 {
		return (v[n/2-1] + v[n/2]) / 2
	}
	return v[len(v)/2]
}

// roundNumbers are the rounds a run has, in order.
func (r *runInfo) roundNumbers() []int {
	var ns []int
	for n := range r.rounds {
		ns = append(ns, n)
	}
	sort.Ints(ns)
	return ns
}

// med is the median over the run's rounds of f.
func (r *runInfo) med(f func(*measured) (float64, bool)) float64 {
	var v []float64
	for _, m := range r.rounds {
		if x, ok := f(m); ok {
			v = append(v, x)
		}
	}
	return median(v)
}

func (r *runInfo) rps() float64 {
	return r.med(func(m *measured) (float64, bool) { return m.RPS, true })
}

// cpu is the median CPU µs/request of process p (NaN: not measured).
func (r *runInfo) cpu(p string) float64 {
	return r.med(func(m *measured) (float64, bool) { x, ok := m.cpuUs[p]; return x, ok })
}

func (r *runInfo) errors() (n int64) {
	for _, m := range r.rounds {
		n += m.Errors
	}
	return n
}

func (r *runInfo) unexpected() (n int64) {
	for _, m := range r.rounds {
		n += m.Unexpected
	}
	return n
}

// cacheCounts sums the Lakegate-Cache counts of the rounds.
func (r *runInfo) cacheCounts() string {
	sum := map[string]int64{}
	for _, m := range r.rounds {
		for k, n := range m.Cache {
			sum[k] += n
		}
	}
	return formatCounts(sum)
}

func formatCounts(c map[string]int64) string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return c[keys[i]] > c[keys[j]] || c[keys[i]] == c[keys[j]] && keys[i] < keys[j] })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, c[k])
	}
	return strings.Join(parts, ", ")
}

// ratios are lakegate's rps over the baseline's, round by round (both
// measured in that round).
func ratios(a, b *runInfo) []float64 {
	var out []float64
	for _, n := range a.roundNumbers() {
		if m, ok := b.rounds[n]; ok && m.RPS > 0 {
			out = append(out, a.rounds[n].RPS/m.RPS)
		}
	}
	return out
}

func fmtNum(x float64) string {
	if math.IsNaN(x) {
		return "—"
	}
	return fmt.Sprintf("%.0f", x)
}

func fmtRatio(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "—"
	}
	return fmt.Sprintf("%.3f×", x)
}

func fmtList(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprintf("%.3f", x)
	}
	return strings.Join(parts, ", ")
}

// writeReport prints the target table, the proxies side by side, the
// medians of every run and the rounds.
func writeReport(w io.Writer, dir string) error {
	runs, byName, err := readRuns(dir)
	if err != nil {
		return err
	}
	skipped := readSkipped(dir)

	fmt.Fprintln(w, "| target | baseline (same run) | baseline rps | lakegate rps | ratio | CPU µs/req lakegate vs baseline | goal | met? |")
	fmt.Fprintln(w, "| --- | --- | ---: | ---: | ---: | --- | --- | --- |")
	var notes []string
	done := map[string]bool{}
	for _, c := range comparisons {
		if reason, ok := skipped[c.target]; ok {
			if !done[c.target] {
				fmt.Fprintf(w, "| %s | — | — | — | — | — | %s | skipped: %s |\n", c.label, goalText(c), reason)
			}
			done[c.target] = true
			continue
		}
		lg, base := byName[c.lakegate], byName[c.baseline]
		if lg == nil || base == nil || len(lg.rounds) == 0 || len(base.rounds) == 0 {
			continue
		}
		done[c.target] = true
		rs := ratios(lg, base)
		ratio := median(rs)
		lgCPU, baseCPU := lg.cpu(lg.front), base.cpu(base.front)
		cpuText := fmt.Sprintf("%s (%s) vs %s (%s)", fmtNum(lgCPU), lg.front, fmtNum(baseCPU), base.front)
		cpuRatio := lgCPU / baseCPU
		if !math.IsNaN(cpuRatio) {
			cpuText += ": " + fmtRatio(cpuRatio)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", c.label, base.label,
			fmtNum(base.rps()), fmtNum(lg.rps()), fmtRatio(ratio), cpuText, goalText(c), met(c, lg, base, ratio, cpuRatio))
		notes = append(notes, fmt.Sprintf("- %s / %s, per round: %s", c.lakegate, c.baseline, fmtList(rs)))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "ratio: the median over rounds of lakegate's rps over the baseline's in the same round;"+
		" CPU: user+system time of the process serving the run (named in parentheses) over the measured window,"+
		" per request, median over rounds.")
	fmt.Fprintln(w)
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}

	// the proxies side by side
	direct, nginx := byName["direct"], byName["nginx"]
	var proxies []*runInfo
	for _, name := range []string{"direct", "nginx", "caddy", "proxy"} {
		if r := byName[name]; r != nil && len(r.rounds) > 0 {
			proxies = append(proxies, r)
		}
	}
	if len(proxies) > 1 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| in front of the backend | rps | vs direct | vs nginx | proxy CPU µs/req | backend CPU µs/req |")
		fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: |")
		for _, r := range proxies {
			vs := func(b *runInfo) string {
				if b == nil || len(b.rounds) == 0 {
					return "—"
				}
				return fmtRatio(median(ratios(r, b)))
			}
			proxyCPU := math.NaN()
			if r.front != "backend" {
				proxyCPU = r.cpu(r.front)
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", r.label, fmtNum(r.rps()), vs(direct), vs(nginx),
				fmtNum(proxyCPU), fmtNum(r.cpu("backend")))
		}
	}

	// every run, medians
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| run | what | rps | p50 (µs) | p99 (µs) | errors | bytes/answer | Lakegate-Cache | CPU µs/req |")
	fmt.Fprintln(w, "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- |")
	for _, r := range runs {
		if len(r.rounds) == 0 {
			continue
		}
		p50 := r.med(func(m *measured) (float64, bool) { return float64(m.P50us), true })
		p99 := r.med(func(m *measured) (float64, bool) { return float64(m.P99us), true })
		perAnswer := r.med(func(m *measured) (float64, bool) {
			ok := m.Requests - m.Errors
			return float64(m.Bytes) / float64(ok), ok > 0
		})
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %d | %s | %s | %s |\n", r.name, r.label, fmtNum(r.rps()),
			fmtNum(p50), fmtNum(p99), r.errors(), fmtNum(perAnswer), r.cacheCounts(),
			cpuList(r, func(p string) float64 { return r.cpu(p) }))
	}

	// every round
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| round | run | requests | errors | rps | p50 (µs) | p99 (µs) | Lakegate-Cache | CPU µs/req |")
	fmt.Fprintln(w, "| ---: | --- | ---: | ---: | ---: | ---: | ---: | --- | --- |")
	maxRound := 0
	for _, r := range runs {
		for n := range r.rounds {
			maxRound = max(maxRound, n)
		}
	}
	for n := 1; n <= maxRound; n++ {
		for _, r := range runs {
			m, ok := r.rounds[n]
			if !ok {
				continue
			}
			fmt.Fprintf(w, "| %d | %s | %d | %d | %.0f | %d | %d | %s | %s |\n", n, r.name, m.Requests, m.Errors,
				m.RPS, m.P50us, m.P99us, formatCounts(m.Cache), cpuList(r, func(p string) float64 {
					if x, ok := m.cpuUs[p]; ok {
						return x
					}
					return math.NaN()
				}))
		}
	}
	return nil
}

// cpuList is "front 123, backend 45" for a run's processes.
func cpuList(r *runInfo, cpu func(string) float64) string {
	parts := []string{}
	for _, p := range append([]string{r.front}, r.others...) {
		if x := cpu(p); !math.IsNaN(x) {
			parts = append(parts, fmt.Sprintf("%s %.0f", p, x))
		}
	}
	return strings.Join(parts, ", ")
}

func goalText(c comparison) string {
	var g []string
	if c.minRatio > 0 {
		g = append(g, fmt.Sprintf("rps ≥ %g×", c.minRatio))
	}
	if c.maxCPU > 0 {
		g = append(g, fmt.Sprintf("CPU ≤ %g×", c.maxCPU))
	}
	if len(g) == 0 {
		return "—"
	}
	return strings.Join(g, ", ")
}

// met says whether a comparison reached its goal, and if not, why.
func met(c comparison, lg, base *runInfo, ratio, cpuRatio float64) string {
	if c.minRatio == 0 && c.maxCPU == 0 {
		return "—"
	}
	var why []string
	if c.minRatio > 0 && !(ratio >= c.minRatio) {
		why = append(why, "rps")
	}
	if c.maxCPU > 0 {
		switch {
		case math.IsNaN(cpuRatio):
			why = append(why, "CPU not measured")
		case cpuRatio > c.maxCPU:
			why = append(why, "CPU")
		}
	}
	if n := lg.errors() + base.errors(); n > 0 {
		why = append(why, fmt.Sprintf("%d errors", n))
	}
	if n := lg.unexpected(); n > 0 {
		why = append(why, fmt.Sprintf("%d loads not answered as expected (%s)", n, lg.cacheCounts()))
	}
	if len(why) == 0 {
		return "yes"
	}
	return "**no** (" + strings.Join(why, "; ") + ")"
}
