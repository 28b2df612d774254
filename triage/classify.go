package triage

// Class is a root cause's class (issue 50: the five outcomes of triage).
type Class string

const (
	SubjectBug          Class = "subject bug candidate"
	HarnessArtefact     Class = "harness artefact"
	OracleImprecision   Class = "oracle imprecision"
	DocumentedDeparture Class = "documented departure"
	ModelBug            Class = "our model's bug"
	// Untriaged: the group could not be looked at (its seed unreadable).
	Untriaged Class = "untriaged"
)

// Classes lists the classes in the order reports count them.
var Classes = []Class{SubjectBug, ModelBug, OracleImprecision, DocumentedDeparture, HarnessArtefact, Untriaged}

// Outcome of a check that may not have run.
type Outcome int

const (
	Skipped Outcome = iota // could not run here (Step.Detail says why)
	Held                   // ran; the condition held (the check passed)
	NotHeld                // ran; it did not (the check failed)
)

// evidence is what classify decides on, gathered by the steps.
type evidence struct {
	Native     bool    // the group's subject is our native model
	Reproduced Outcome // the finding replayed on its subject
	Harness    []string
	Departure  string    // a documented departure that makes the oracle moot here
	References []Outcome // the same configuration on the other implementations
}

// classify decides a group's class from its evidence, and whether it is
// confirmed: every step ran, none skipped. The order is the order a
// maintainer rules things out: our harness, the documentation, the
// replay, then the differential.
func classify(e evidence) (Class, string, bool) {
	ran, held := 0, 0
	for _, r := range e.References {
		if r != Skipped {
			ran++
		}
		if r == Held {
			held++
		}
	}
	allRan := ran == len(e.References) && len(e.References) > 0 && e.Reproduced != Skipped
	switch {
	case len(e.Harness) > 0:
		return HarnessArtefact, "the harness check failed: " + e.Harness[0], e.Reproduced != Skipped
	case e.Departure != "":
		return DocumentedDeparture, e.Departure, true
	case e.Reproduced == NotHeld:
		return HarnessArtefact, "the finding does not replay on its subject", true
	case held > 0:
		return OracleImprecision, "another implementation of the same CCA breaks the oracle too: the behaviour is shared, so the rule is likelier too strict than both wrong", allRan
	case e.Native && ran > 0:
		return ModelBug, "no other implementation of the CCA breaks the oracle on this configuration: the behaviour is our model's own", allRan
	case e.Native:
		return ModelBug, "no other implementation could run here to tell whether the behaviour is shared", false
	case ran > 0:
		return SubjectBug, "our native model of the CCA keeps the oracle on this configuration: the behaviour is the subject's own", allRan
	default:
		return SubjectBug, "no other implementation could run here to tell whether the behaviour is shared", false
	}
}
