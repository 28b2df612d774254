package report

import (
	"cmp"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/corpus/pktexport"
	"github.com/actfuzz/actfuzz/coverage"
	"github.com/actfuzz/actfuzz/internal/shell"
	"github.com/actfuzz/actfuzz/netenv"
)

// page is what the template shows.
type page struct {
	Title     string
	Generated string
	Live      bool
	Campaign  campaignInfo
	Runs      []runInfo // the campaign's run, then its baselines
	Coverage  coverageInfo
	Heat      heatInfo
	Findings  []conditionInfo
	Faults    []findingInfo
	Hits      int         // condition hits, over every group
	Sym       []symInfo   // sym*.json in the directory
	Triage    *triageInfo // triage.json in the directory (nil: not triaged)
	// Top are the act.TopGroups most important groups (act.Report.Ranked),
	// conditions and faults: the page's first screen; Groups counts them all.
	Top    []findingInfo
	Groups int
}

type kv struct{ Key, Value string }

type campaignInfo struct {
	Name       string
	Headline   string // "cubic + reno on native, ACT, 200 simulations"
	Setup      []kv   // L, T, profile, bytes, subject, build, seed, budget …
	Params     []kv   // P
	Space      []kv   // S
	Conditions []kv   // C
	// Oracles are the oracles checked beside C (name, source), once
	// each; OracleSkips those that cannot run on the subject (name, why).
	Oracles     []kv
	OracleSkips []kv
}

type runInfo struct {
	Method  string
	Figures []kv
	Steps   []stepRow
	StepKs  []int
}

type stepRow struct {
	Step  string
	Sims  string
	Share string
	New   []string // new regions at StepKs
}

type coverageInfo struct {
	Methods []string
	Rows    []covRow
	Notes   []string
	Plots   []image
}

type covRow struct {
	K       int
	Meaning string
	Total   string
	Cells   []covCell // one per method
}

type covCell struct {
	Visited string
	Percent string
	Note    string
}

type image struct {
	Src, Alt, Caption string
}

type heatInfo struct {
	K      int
	Maps   []image
	Notes  []string
	Absent string // why there is no heat map
}

type conditionInfo struct {
	ID     string
	Name   string
	When   string
	Hits   int
	Groups []findingInfo // shown in full (at most maxCards), most important first
	// Rest are the less important groups past maxCards, one table row each: a
	// condition that holds all over a campaign (the paper's
	// cubic-aggressive finds a hundred groups in 200 simulations) would
	// otherwise make the page a hundred plots long.
	Rest []findingInfo
}

// Total is the condition's number of groups.
func (c conditionInfo) Total() int { return len(c.Groups) + len(c.Rest) }

// maxCards is how many groups of a condition the page shows in full.
const maxCards = 10

type findingInfo struct {
	ID        string
	Title     string
	Hits      int
	FirstSim  int
	FirstWall string
	Step      string
	At        string // simulated time of the hit
	Flow      int
	CCAI      string
	Subject   string
	Kind      string
	Detail    string
	Plot      string // relative to the page; "" when there is none
	State     []kv
	SchedHead []string
	Schedule  [][]string
	Commands  []string
	Seed      string
	RootCause string
	Rank      int // among all the campaign's groups, 1 the most important
}

func build(out, dir string, c *act.Campaign, reps []*act.Report, opt Options) (*page, error) {
	rep := reps[0]
	name := strings.TrimSuffix(filepath.Base(out), filepath.Ext(out))
	pg := &page{Title: "actfuzz report: " + name, Generated: opt.Now.UTC().Format("2006-01-02 15:04:05 UTC"), Live: opt.Live}
	pg.Campaign = campaign(name, c, rep)
	for i, r := range reps {
		ri := run(out, r)
		if i == 0 {
			ri.Figures = append(ri.Figures, memoryFigures(c, r, opt.PeakRSS)...)
		}
		pg.Runs = append(pg.Runs, ri)
	}
	pg.Coverage = coverageTable(c.Space, reps)
	plots, err := coveragePlots(dir, reps)
	if err != nil {
		return nil, err
	}
	pg.Coverage.Plots = plots
	if pg.Heat, err = heatMaps(dir, rep.Store); err != nil {
		return nil, err
	}
	pg.Findings, pg.Faults, pg.Top = findings(out, dir, rep, opt)
	pg.Groups = len(rep.Findings)
	if pg.Sym, err = symReports(out); err != nil {
		return nil, err
	}
	if pg.Triage, err = triageSection(out, dir); err != nil {
		return nil, err
	}
	for _, ci := range pg.Findings {
		pg.Hits += ci.Hits
	}
	return pg, nil
}

func campaign(name string, c *act.Campaign, rep *act.Report) campaignInfo {
	ci := campaignInfo{Name: name}
	subject := cmp.Or(rep.SubjectName(), "not recorded")
	build := cmp.Or(rep.ProgramVersion(), "not recorded")
	ci.Headline = fmt.Sprintf("%s on %s (%s, %s)", strings.Join(c.CCAI, " + "), subject, c.Topology, c.Profile)
	ci.Setup = []kv{
		{"L: congestion control, one per flow", strings.Join(c.CCAI, ", ")},
		{"T: topology", c.Topology},
		{"profile", c.Profile.String()},
		{"bytes per flow", fmtInt(int64(c.Bytes))},
		{"SACK", strconv.FormatBool(c.SACK)},
		{"subject", subject},
		{"build", build},
		{"campaign seed", strconv.FormatUint(c.Seed, 10)},
		{"budget in the campaign file", fmtInt(int64(c.Budget)) + " simulations"},
		{"saturation", fmt.Sprintf("κ = %d, δ = %s per %s simulations", c.Kappa, fmtPercent(c.Delta), fmtInt(int64(c.Window)))},
	}
	for i, p := range netenv.Params() {
		if i >= len(c.Params) {
			break
		}
		r := c.Params[i]
		v := ""
		switch {
		case len(r.Values) > 0:
			v = strings.Join(r.Values, ", ")
		case r.Min == r.Max:
			v = "fixed at " + fmtNum(r.Min)
		default:
			v = fmt.Sprintf("[%s, %s] step %s", fmtNum(r.Min), fmtNum(r.Max), fmtNum(r.Step))
		}
		ci.Params = append(ci.Params, kv{p.Label(), v})
	}
	for _, v := range c.Space.Vars {
		val := ""
		if v.Categorical() {
			val = strings.Join(v.Values, ", ")
		} else {
			val = fmt.Sprintf("[%s, %s] step %s%s", fmtNum(v.Min), fmtNum(v.Max), fmtNum(v.Step), unitSuffix(v.Name))
		}
		ci.Space = append(ci.Space, kv{v.Name, val})
	}
	for _, cs := range c.Conditions {
		ci.Conditions = append(ci.Conditions, kv{cs.Name, cs.When})
	}
	for _, cs := range c.OracleConds {
		if !slices.ContainsFunc(ci.Oracles, func(o kv) bool { return o.Key == cs.Name }) {
			ci.Oracles = append(ci.Oracles, kv{cs.Name, cs.Source})
		}
	}
	for _, sk := range c.OracleSkips {
		ci.OracleSkips = append(ci.OracleSkips, kv{sk.Oracle, sk.Why})
	}
	return ci
}

// unitSuffix is " packets" or " ms" for the state variables that have one.
func unitSuffix(name string) string {
	switch name {
	case "cwnd", "ssthresh", "prior_cwnd", "target", "w_max", "wmax":
		return " packets"
	case "srtt", "rttvar", "min_rtt":
		return " ms"
	}
	return ""
}

func run(out string, r *act.Report) runInfo {
	wall := r.Elapsed()
	ri := runInfo{Method: r.Method}
	rate := "—"
	if wall > 0 {
		rate = fmt.Sprintf("%.1f", float64(r.Sims)/wall.Seconds())
	}
	ri.Figures = []kv{
		{"simulations", fmtInt(int64(r.Sims))},
		{"wall time", wall.Round(time.Second).String()},
		{"simulations per second", rate},
	}
	if info, err := act.ReadCheckpoint(out, r.Method); err == nil {
		limits := fmtInt(int64(info.Budget)) + " simulations"
		if info.Duration > 0 {
			limits += ", " + info.Duration.String() + " of wall time"
		}
		ri.Figures = append(ri.Figures, kv{"limits of the run", limits}, kv{"workers", strconv.Itoa(info.Workers)})
	}
	if r.Capped > 0 {
		ri.Figures = append(ri.Figures, kv{"runs stopped by the simulated-time cap", fmtInt(int64(r.Capped))})
	}
	if r.StatesDropped > 0 {
		ri.Figures = append(ri.Figures, kv{"capped: runs whose states were not merged (result over the cluster's max_result)", fmtInt(int64(r.StatesDropped))})
	}
	ks := r.Store.Space().Ks()
	for _, k := range []int{1, 16, 128} {
		if slices.Contains(ks, k) {
			ri.StepKs = append(ri.StepKs, k)
		}
	}
	if r.Symbolic != nil {
		ri.Figures = append(ri.Figures, kv{"symbolic step (sims of its row: simulation-equivalents)", r.Symbolic.String()})
	}
	for _, st := range act.ReportSteps {
		n, ok := r.StepSims[st]
		if !ok {
			continue
		}
		row := stepRow{Step: st.String(), Sims: fmtInt(int64(n)), Share: fmtPercent(float64(n) / math.Max(float64(r.Sims), 1))}
		for _, k := range ri.StepKs {
			i := slices.Index(ks, k)
			var v uint64
			if found := r.StepRegions[st]; i >= 0 && i < len(found) {
				v = found[i]
			}
			row.New = append(row.New, fmtInt(int64(v)))
		}
		ri.Steps = append(ri.Steps, row)
	}
	return ri
}

func memoryFigures(c *act.Campaign, r *act.Report, peak int64) []kv {
	st := r.Store
	budget := "a budget not recorded in the checkpoint"
	if m := st.Options().Memory; m > 0 {
		budget = "a " + fmtBytes(m) + " budget"
	} else if c.Memory > 0 {
		// A checkpoint does not keep the run's --memory: the campaign's.
		budget = fmt.Sprintf("a %s budget (%d/10 of the campaign's memory: unless --memory changed it)", fmtBytes(c.Memory/10*act.StoreShare), act.StoreShare)
	}
	store := fmt.Sprintf("%s of %s; regions exact from k=%d, pools at k=%d", fmtBytes(int64(st.Bytes())),
		budget, st.FloorK(), st.PoolK())
	if st.OverBudget() {
		store += "; over budget: nothing left to coarsen"
	}
	rss := "not measured (this page was written after the run)"
	if peak > 0 {
		rss = fmtBytes(peak)
	}
	return []kv{{"coverage store", store}, {"peak memory of the campaign process (RSS)", rss}}
}

// kMeaning says in words what one region at k is: the variables grouped by
// their unit and width, "cwnd, ssthresh 16 packets; srtt, rttvar 64 ms; one
// ca_state".
func kMeaning(sp coverage.Space, k int) string {
	var groups []string
	var names []string
	width := ""
	flush := func() {
		if len(names) > 0 {
			groups = append(groups, strings.Join(names, ", ")+" "+width)
		}
		names = nil
	}
	for _, v := range sp.Vars {
		if v.Categorical() {
			continue
		}
		w := fmtNum(float64(k)*v.Step) + unitSuffix(v.Name)
		if w != width {
			flush()
			width = w
		}
		names = append(names, v.Name)
	}
	flush()
	for _, v := range sp.Vars {
		if v.Categorical() {
			groups = append(groups, "one "+v.Name)
		}
	}
	s := strings.Join(groups, "; ")
	if k == 1 {
		return "one granule: " + s
	}
	return s
}

func coverageTable(sp coverage.Space, reps []*act.Report) coverageInfo {
	var ci coverageInfo
	snaps := make([]coverage.Snapshot, len(reps))
	for i, r := range reps {
		ci.Methods = append(ci.Methods, r.Method)
		snaps[i] = r.Store.Snapshot(r.Method, int64(r.Sims))
	}
	for l, k := range sp.Ks() {
		row := covRow{K: k, Meaning: kMeaning(sp, k), Total: fmtInt(int64(min(sp.Regions(k), math.MaxInt64)))}
		if sp.Regions(k) == math.MaxUint64 {
			row.Total += fmt.Sprintf(" (capped at %s)", fmtInt(math.MaxInt64))
		}
		for i, sn := range snaps {
			cell := covCell{Visited: "—", Percent: "—"}
			if l < len(sn.Visited) {
				cell.Visited = fmtInt(int64(sn.Visited[l]))
				cell.Percent = fmtPercent(sn.Coverage(k))
			}
			if !reps[i].Store.Exact(k) {
				cell.Note = "estimated"
			}
			row.Cells = append(row.Cells, cell)
		}
		ci.Rows = append(ci.Rows, row)
	}
	for _, r := range reps {
		states, _ := r.Store.OutOfRange()
		line := fmt.Sprintf("%s: %s visited states outside S", r.Method, fmtInt(int64(states)))
		if d := r.Store.OutOfRangeDropped(); d > 0 {
			line += fmt.Sprintf(" (capped at %s; %s more were not kept)", fmtInt(int64(states)), fmtInt(int64(d)))
		}
		if r.Store.FloorK() > 1 {
			line += fmt.Sprintf("; the store coarsened at its memory budget: counts below k=%d are estimates", r.Store.FloorK())
		}
		if len(r.Series.Points) >= coverage.MaxSeriesPoints {
			line += fmt.Sprintf("; the growth series keeps every other point past %s points (capped at %s)", fmtInt(coverage.MaxSeriesPoints), fmtInt(coverage.MaxSeriesPoints))
		}
		ci.Notes = append(ci.Notes, line)
	}
	return ci
}

// findings are the groups of conditions (by condition) and of faults,
// most important first (act.Report.Ranked), and the act.TopGroups first
// of them all.
func findings(out, dir string, rep *act.Report, opt Options) (conds []conditionInfo, faults, top []findingInfo) {
	byCond := map[string]*conditionInfo{}
	var order []string
	for i, g := range rep.Ranked() {
		f := g.Seed.Finding
		fi := finding(out, dir, g, opt)
		fi.Rank = i + 1
		if len(top) < act.TopGroups {
			top = append(top, fi)
		}
		if f.Kind != "condition" {
			faults = append(faults, fi)
			continue
		}
		ci, ok := byCond[f.Condition]
		if !ok {
			ci = &conditionInfo{ID: "c-" + anchor(f.Condition), Name: f.Condition, When: f.When}
			byCond[f.Condition] = ci
			order = append(order, f.Condition)
		}
		ci.Hits += g.Count
		ci.Groups = append(ci.Groups, fi)
	}
	for _, name := range order {
		ci := byCond[name]
		if len(ci.Groups) > maxCards {
			ci.Groups, ci.Rest = ci.Groups[:maxCards], ci.Groups[maxCards:]
		}
		conds = append(conds, *ci)
	}
	return conds, faults, top
}

func finding(out, dir string, g *act.FindingGroup, opt Options) findingInfo {
	s, f := g.Seed, g.Seed.Finding
	fi := findingInfo{Hits: g.Count, RootCause: g.RootCause(), FirstSim: g.FirstSim, FirstWall: g.FirstWall.Round(time.Second).String(), Step: g.Step.String(),
		At: fmt.Sprintf("%.3f s", float64(f.TimeNS)/1e9), Flow: f.Flow, Subject: s.Subject, Kind: f.Kind, Detail: f.Detail}
	if f.Flow >= 0 && f.Flow < len(s.CCAI) {
		fi.CCAI = s.CCAI[f.Flow]
	}
	fi.Title = f.Condition
	if f.Kind != "condition" {
		fi.Title = "fault: " + f.Kind
	}
	if f.Kind == corpus.FaultCondition {
		fi.Title += " " + f.Condition // one group a faulty condition
	}
	fi.ID = fmt.Sprintf("f-%s-%d", anchor(fi.Title), g.FirstSim)
	if g.Path != "" {
		// The seed's path as the run named it may be relative to another
		// directory: find it under out by its last two elements.
		seed := act.FindingPath(out, g.Path)
		fi.Seed = seed
		png := strings.TrimSuffix(seed, filepath.Ext(seed)) + ".png"
		if _, err := os.Stat(png); err == nil {
			if rel, err := filepath.Rel(dir, png); err == nil {
				fi.Plot = filepath.ToSlash(rel)
			}
		}
		fi.Commands = append(fi.Commands, opt.Program+" replay "+shell.Quote(seed))
		if f.Kind == "condition" {
			fi.Commands = append(fi.Commands, opt.Program+" minimize "+shell.Quote(seed))
			if vs := diffVs(opt, s); vs != "" {
				fi.Commands = append(fi.Commands, opt.Program+" diff "+shell.Quote(seed)+" --subject "+s.Subject+" --vs "+vs)
			}
		}
		if pktexport.Check(s) == nil {
			fi.Commands = append(fi.Commands, act.ExportPktCommand(opt.Program, seed))
		}
	}
	keys := make([]string, 0, len(f.State))
	for k := range f.State {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fi.State = append(fi.State, kv{k, fmtValue(f.State[k])})
	}
	fi.SchedHead, fi.Schedule = schedule(s.Schedule)
	return fi
}

// diffVs is opt.DiffVs(s), "" without one.
func diffVs(opt Options, s *corpus.Seed) string {
	if opt.DiffVs == nil {
		return ""
	}
	return opt.DiffVs(s)
}

// schedule is the environment schedule as a table: one row per parameter
// of P, one column per phase (a schedule has few phases, P many rows).
func schedule(sched netenv.Schedule) ([]string, [][]string) {
	if len(sched) == 0 {
		return nil, nil
	}
	ps := netenv.Params()
	head := []string{"parameter"}
	var from time.Duration
	for i, ph := range sched {
		until := "end"
		if i < len(sched)-1 {
			until = fmtDur(ph.Until)
		}
		head = append(head, fmt.Sprintf("phase %d: %s – %s", i+1, fmtDur(from), until))
		from = ph.Until
	}
	rows := make([][]string, len(ps))
	for j := range ps {
		rows[j] = []string{ps[j].Label()}
		for _, ph := range sched {
			if ps[j].Kind == netenv.Categorical {
				rows[j] = append(rows[j], ps[j].Format(&ph.Env))
			} else {
				rows[j] = append(rows[j], fmtSig(ps[j].Get(&ph.Env)))
			}
		}
	}
	return head, rows
}

func fmtDur(d time.Duration) string { return fmt.Sprintf("%.3f s", d.Seconds()) }

// anchor makes an HTML id from a name.
func anchor(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-':
			return r
		}
		return '_'
	}, s)
}

func fmtValue(v any) string {
	if f, ok := v.(float64); ok {
		return fmtNum(f)
	}
	return fmt.Sprint(v)
}

// fmtNum prints whole numbers in full and others with up to 6 significant
// digits, never with an exponent below 1e15.
func fmtNum(f float64) string {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return strconv.FormatFloat(f, 'g', -1, 64)
	case f == math.Trunc(f) && math.Abs(f) < 1e15:
		return fmtInt(int64(f))
	case math.Abs(f) >= 1e15:
		return strconv.FormatFloat(f, 'g', 6, 64)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// fmtSig prints a value with at most 5 significant digits, without an
// exponent in the usual ranges: the schedule table's format (the seed
// file has the exact values).
func fmtSig(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return fmtInt(int64(f))
	}
	if a := math.Abs(f); a >= 1e-6 && a < 1e15 {
		v, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'g', 5, 64), 64)
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', 5, 64)
}

// fmtInt groups the digits by three: 1,234,567.
func fmtInt(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// fmtPercent is the page's one percentage format (coverage.FormatPercent).
func fmtPercent(f float64) string { return coverage.FormatPercent(f) + " %" }

func fmtBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
