package act

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/coverage"
	"github.com/actfuzz/actfuzz/netenv"
)

// runState is the runner's bookkeeping that a checkpoint must keep.
type runState struct {
	LastWindowSims    int
	LastWindowRegions uint64
	StepStart         int
	// Configs is how many records of the configuration log the checkpoint
	// covers: the merged ones and those chosen but not yet merged, which a
	// resume runs again.
	Configs int
	// The run's settings (after defaults) and the wall time of the
	// campaign so far, over every resume: a resume takes them from here
	// unless given again (see ReadCheckpoint).
	Budget   int
	Duration time.Duration
	Workers  int
	Wall     time.Duration
	// Lag is Options.Lag (0 in checkpoints written before it existed:
	// DefaultLag).
	Lag int
	// Sym is the symbolic step's state (nil when the campaign has none).
	Sym *symState
}

// CheckpointInfo is what a checkpoint says about its run, for a command
// that resumes it with the same settings.
type CheckpointInfo struct {
	Method   string
	Sims     int
	Budget   int
	Duration time.Duration // 0: none
	Workers  int
	Wall     time.Duration // over every run so far
	Lag      int           // batches chosen ahead of the merge
}

// CheckpointMethods lists the methods that have a checkpoint in dir.
func CheckpointMethods(dir string) []string {
	paths, _ := filepath.Glob(checkpointPath(dir, "*"))
	var ms []string
	for _, p := range paths {
		b := filepath.Base(p)
		ms = append(ms, b[len("checkpoint-"):len(b)-len(".gob")])
	}
	return ms
}

// ReadCheckpoint reads the settings of the campaign checkpointed in dir
// for method; os.ErrNotExist (wrapped) when there is none.
func ReadCheckpoint(dir, method string) (CheckpointInfo, error) {
	f, err := os.Open(checkpointPath(dir, method))
	if err != nil {
		return CheckpointInfo{}, err
	}
	defer f.Close()
	cp, _, err := readCheckpointHeader(f, checkpointPath(dir, method))
	if err != nil {
		return CheckpointInfo{}, err
	}
	return CheckpointInfo{Method: cp.Method, Sims: cp.Sims, Budget: cp.Run.Budget, Duration: cp.Run.Duration,
		Workers: cp.Run.Workers, Wall: cp.Run.Wall, Lag: cmp.Or(cp.Run.Lag, DefaultLag)}, nil
}

// ErrCampaignChanged is returned (wrapped) by Run when Options.Resume finds
// a checkpoint written for another campaign: bad input, not an I/O error.
var ErrCampaignChanged = errors.New("the campaign file changed since the checkpoint")

// checkpointVersion changes whenever the layout below does.
const checkpointVersion = 3

type checkpointGroup struct {
	Key       string
	Count     int
	Path      string
	Seed      corpus.Seed
	FirstSim  int
	Step      Step
	FirstWall time.Duration
}

// checkpoint is everything needed to continue a campaign exactly where it
// stopped: the selector's PRNG, step and profile, how far the configuration
// log goes (the pools refer to its records; the log itself is
// coverage/configs-METHOD.log beside the checkpoint), the finding groups and
// the coverage store with its PRNGs. Its size is that of the store plus the
// finding groups: nothing in it grows with the simulations run.
type checkpoint struct {
	Version     int
	Method      string
	CampaignSum [32]byte
	Sims        int
	Step        Step
	RNG         []byte
	ProfP       [][]float64
	ProfS       [][]float64
	Run         runState
	Groups      []checkpointGroup
	StepSims    map[Step]int
	StepRegions map[Step][]uint64
	Capped      int
	// StatesDropped is Report.StatesDropped (cluster runs).
	StatesDropped int
	Series        coverage.Series
	// Bandit is the adaptive schedule's posteriors (nil under the paper's).
	Bandit *stepBandit
	// Directed is directed ACT's state (nil when off).
	Directed *directedState
	// Params are the names of P's parameters, in table order, of the
	// build that wrote the checkpoint: the configuration log stores one
	// value per parameter, so a build with another table cannot read it.
	// Nil in checkpoints written before the table existed (v3Params).
	Params []string
	// Subject and Program name what ran the campaign and the build that
	// wrote the checkpoint, for the report (empty in older checkpoints).
	Subject string
	Program string
}

func (cp *checkpoint) params() []string {
	if cp.Params == nil {
		return v3Params
	}
	return cp.Params
}

// v3Params are the parameters of every checkpoint that does not list them.
var v3Params = []string{"loss", "bw", "delay", "qshape", "qscale", "app", "buffer"}

// The checkpoint file: checkpointMagic, the length of the gob-encoded
// checkpoint as a little-endian u64, the checkpoint, then the coverage
// store in its own binary format (coverage.Store.WriteTo), streamed: the
// store is most of the file (tens of bytes per state), and building it in
// memory first would double the coordinator's memory at every checkpoint.
const checkpointMagic = "ACTCKPT\n"

func checkpointPath(dir, method string) string {
	return filepath.Join(dir, "coverage", "checkpoint-"+method+".gob")
}

// saveCheckpoint writes the checkpoint atomically (temporary file, then
// rename), so a kill at any moment leaves the previous one intact.
func saveCheckpoint(dir string, c *Campaign, method string, sel *selector, rep *Report, rs *runState) error {
	rng, err := sel.src.MarshalBinary()
	if err != nil {
		return err
	}
	if err := sel.log.sync(); err != nil {
		return err
	}
	rs.Configs = sel.log.len()
	cp := checkpoint{Version: checkpointVersion, Method: method, CampaignSum: c.sum(), Sims: rep.Sims,
		Step: sel.step, RNG: rng, ProfP: sel.prof.p, ProfS: sel.prof.s, Run: *rs, Params: netenv.ParamNames(),
		StepSims: rep.StepSims, StepRegions: rep.StepRegions, Capped: rep.Capped, StatesDropped: rep.StatesDropped, Series: *rep.Series,
		Subject: rep.SubjectName(), Program: corpus.ProgramVersion(), Bandit: sel.bandit, Directed: sel.dir}
	for _, g := range rep.Findings {
		cp.Groups = append(cp.Groups, checkpointGroup{Key: g.key, Count: g.Count, Path: g.Path, Seed: *g.Seed,
			FirstSim: g.FirstSim, Step: g.Step, FirstWall: g.FirstWall})
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(&cp); err != nil {
		return err
	}
	err = corpus.WriteAtomic(checkpointPath(dir, method), func(w io.Writer) error {
		hdr := binary.LittleEndian.AppendUint64([]byte(checkpointMagic), uint64(buf.Len()))
		if _, err := w.Write(hdr); err != nil {
			return err
		}
		if _, err := w.Write(buf.Bytes()); err != nil {
			return err
		}
		if rep.writeStore != nil {
			_, err := rep.writeStore(w)
			return err
		}
		_, err := rep.Store.WriteTo(w)
		return err
	})
	if err == nil && rep.onCheckpoint != nil {
		rep.onCheckpoint(rep)
	}
	return err
}

// readCheckpointHeader reads the magic and the gob-encoded checkpoint; the
// reader it returns is positioned at the store.
func readCheckpointHeader(f io.Reader, path string) (*checkpoint, *bufio.Reader, error) {
	r := bufio.NewReaderSize(f, 1<<20)
	hdr := make([]byte, len(checkpointMagic)+8)
	if _, err := io.ReadFull(r, hdr); err != nil || string(hdr[:len(checkpointMagic)]) != checkpointMagic {
		return nil, nil, fmt.Errorf("%s: corrupt checkpoint: not an actfuzz checkpoint of this version", path)
	}
	n := binary.LittleEndian.Uint64(hdr[len(checkpointMagic):])
	if n > 1<<30 {
		return nil, nil, fmt.Errorf("%s: corrupt checkpoint: header of %d bytes", path, n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, nil, fmt.Errorf("%s: corrupt checkpoint: %w", path, err)
	}
	cp := new(checkpoint)
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(cp); err != nil {
		return nil, nil, fmt.Errorf("%s: corrupt checkpoint: %w", path, err)
	}
	return cp, r, nil
}

// loadCheckpoint restores a campaign; ok is false when there is none.
// With storeParts > 0 the store it restores is the index of that many
// parts, and parts are the sources of the parts' encodings, for the
// Executor to load (coverage.ReadSplit: neither the whole store nor the
// parts' encodings are held here); they read the checkpoint file, which
// stays open until closeParts is called (never nil without an error), or,
// for a checkpoint of another part count, files of the parts made again
// beside it, which closeParts removes.
func loadCheckpoint(dir string, c *Campaign, method string, sel *selector, rep *Report, groups map[string]*FindingGroup, rs *runState, storeParts int) (ok bool, parts []coverage.PartSource, closeParts func(), err error) {
	path := checkpointPath(dir, method)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil, func() {}, nil
	}
	if err != nil {
		return false, nil, nil, err
	}
	keepOpen := false
	removeParts := func() {} // the files of parts made again (ReadSplitIn)
	defer func() {
		if !keepOpen {
			f.Close()
			removeParts()
		}
	}()
	cp, r, err := readCheckpointHeader(f, path)
	if err != nil {
		return false, nil, nil, err
	}
	switch {
	case cp.Version != checkpointVersion:
		return false, nil, nil, fmt.Errorf("%s: checkpoint version %d, this program writes %d", checkpointPath(dir, method), cp.Version, checkpointVersion)
	case cp.CampaignSum != c.sum():
		return false, nil, nil, fmt.Errorf("%s: %w; resume with the same file or use a new --out", dir, ErrCampaignChanged)
	case !slices.Equal(cp.params(), netenv.ParamNames()):
		return false, nil, nil, fmt.Errorf("%s: the checkpoint's parameters of P are %v, this build's are %v: resume it with the build that wrote it, or use a new --out", checkpointPath(dir, method), cp.params(), netenv.ParamNames())
	}
	var st *coverage.Store
	if storeParts > 0 {
		// The store starts where the header's reader has read to, less
		// what it holds unread.
		var at, size int64
		if at, err = f.Seek(0, io.SeekCurrent); err == nil {
			at -= int64(r.Buffered())
			var fi os.FileInfo
			if fi, err = f.Stat(); err == nil {
				size = fi.Size() - at
			}
		}
		if err == nil {
			// Parts made again for another part count go to files beside
			// the checkpoint, not into memory; a coordinator killed while
			// it loaded them left its own (one coordinator a directory).
			stale, _ := filepath.Glob(filepath.Join(dir, coverage.ResplitPattern))
			for _, f := range stale {
				os.Remove(f)
			}
			var remove func()
			if st, parts, remove, err = coverage.ReadSplitIn(io.NewSectionReader(f, at, size), size, storeParts, dir); err == nil {
				removeParts = remove
			}
		}
	} else {
		st, err = coverage.ReadCheckpoint(r)
	}
	if err != nil {
		return false, nil, nil, fmt.Errorf("%s: checkpoint store: %w", path, err)
	}
	mem := rep.Store.Options().Memory
	*rep.Store = *st
	rep.Store.SetMemory(mem) // a run setting, like the out-of-range limit
	if err := sel.src.UnmarshalBinary(cp.RNG); err != nil {
		return false, nil, nil, err
	}
	sel.step = cp.Step
	if cp.Bandit != nil && sel.bandit != nil {
		*sel.bandit = *cp.Bandit
	}
	if cp.Directed != nil && sel.dir != nil {
		*sel.dir = *cp.Directed
	}
	sel.prof.p, sel.prof.s = cp.ProfP, cp.ProfS
	*rs = cp.Run
	rep.Sims = cp.Sims
	rep.StepSims, rep.StepRegions, rep.Capped, rep.StatesDropped = cp.StepSims, cp.StepRegions, cp.Capped, cp.StatesDropped
	*rep.Series = cp.Series
	rep.Findings = loadGroups(dir, cp.Groups, groups)
	if parts == nil {
		return true, nil, func() {}, nil
	}
	keepOpen = true
	return true, parts, func() { f.Close(); removeParts() }, nil
}
