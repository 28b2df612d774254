package ccai

import (
	"fmt"
	"slices"
	"sync"
)

// Info describes a registered algorithm.
type Info struct {
	Name        string           // registry key, lower case (e.g. "cubic")
	Description string           // one line for `actfuzz list`
	New         func() Algorithm // returns a fresh instance per flow
	// Family names the published algorithm whose rules the CCAI follows
	// (FamilyReno, FamilyCubic, FamilyBBR, FamilyDCTCP, FamilyLossBased),
	// so the oracle library checks a user's own CCAI against them; empty:
	// only the rules of every congestion control.
	Family string
	// Beta is the smallest fraction of cwnd a loss reduction keeps
	// (ssthresh ≥ Beta·cwnd at the loss: Reno's ½, CUBIC's 0.7); 0
	// declares none (a rate-based or bandwidth-estimating algorithm).
	Beta float64
}

// The families of Info.Family.
const (
	FamilyReno      = "reno"       // Reno's loss response: ssthresh = max(cwnd/2, 2) (RFC 5681 §3.1)
	FamilyCubic     = "cubic"      // CUBIC (RFC 9438)
	FamilyBBR       = "bbr"        // BBR (draft-ietf-ccwg-bbr; Cardwell et al. 2016): a model-based rate
	FamilyDCTCP     = "dctcp"      // DCTCP (RFC 8257): ECN-proportional reduction
	FamilyLossBased = "loss-based" // another window algorithm that reduces on loss by a factor of its own
)

// The registry is the only global state of actfuzz: algorithms register
// themselves from init functions, in this module or in a user's.
var (
	registryMu sync.RWMutex
	registry   = map[string]Info{}
)

// Register adds an algorithm. It panics on an empty or duplicate name or a
// nil constructor, as those are programming errors found at start-up.
func Register(info Info) {
	if info.Name == "" || info.New == nil {
		panic("ccai: Register needs a Name and a New function")
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[info.Name]; dup {
		panic(fmt.Sprintf("ccai: algorithm %q registered twice", info.Name))
	}
	registry[info.Name] = info
}

// Lookup returns the registered algorithm called name.
func Lookup(name string) (Info, bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	info, ok := registry[name]
	return info, ok
}

// New creates a fresh instance of the algorithm called name.
func New(name string) (Algorithm, error) {
	info, ok := Lookup(name)
	if !ok {
		return nil, fmt.Errorf("unknown congestion control %q (known: %v)", name, Names())
	}
	return info.New(), nil
}

// Names returns the registered names in sorted order.
func Names() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// VarsOf returns the variables an algorithm exposes, or nil.
func VarsOf(a Algorithm) []VarDesc {
	if v, ok := a.(VarExporter); ok {
		return v.Vars()
	}
	return nil
}
