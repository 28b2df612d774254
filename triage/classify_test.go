package triage

import "testing"

func TestClassify(t *testing.T) {
	tests := []struct {
		name      string
		ev        evidence
		class     Class
		confirmed bool
	}{
		{"harness failure wins", evidence{Harness: []string{"capped"}, Reproduced: Held, References: []Outcome{NotHeld}}, HarnessArtefact, true},
		{"documented departure", evidence{Departure: "NotOn linux", Reproduced: Held, References: []Outcome{NotHeld}}, DocumentedDeparture, true},
		{"does not replay", evidence{Reproduced: NotHeld, References: []Outcome{NotHeld}}, HarnessArtefact, true},
		{"native, reference shares it", evidence{Native: true, Reproduced: Held, References: []Outcome{Held, Skipped}}, OracleImprecision, false},
		{"native, every reference keeps it", evidence{Native: true, Reproduced: Held, References: []Outcome{NotHeld, NotHeld}}, ModelBug, true},
		{"native, no reference ran", evidence{Native: true, Reproduced: Held, References: []Outcome{Skipped, Skipped}}, ModelBug, false},
		{"subject, native keeps it", evidence{Reproduced: Held, References: []Outcome{NotHeld}}, SubjectBug, true},
		{"subject, native shares it", evidence{Reproduced: Held, References: []Outcome{Held}}, OracleImprecision, true},
		{"subject cannot run here", evidence{Reproduced: Skipped, References: []Outcome{NotHeld}}, SubjectBug, false},
		{"subject, no reference ran", evidence{Reproduced: Held, References: []Outcome{Skipped}}, SubjectBug, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, why, conf := classify(tt.ev)
			if c != tt.class || conf != tt.confirmed {
				t.Errorf("classify = %q (confirmed %v), want %q (confirmed %v): %s", c, conf, tt.class, tt.confirmed, why)
			}
			if why == "" {
				t.Error("no evidence given")
			}
		})
	}
}
