package corpus

// CompileVM is Compile keeping the VM's programs, which VMOnly and GatedVM
// need.
func CompileVM(specs []ConditionSpec, schema Schema) ([]*Condition, error) {
	return compile(specs, schema, true)
}

// VMOnly turns off, in conds (from CompileVM), everything that evaluates a condition without
// expr-lang's VM: the closure trees, the gates and the dispatch key (which
// is then empty: every condition runs at every record). The tests that
// compare the two paths (TestFastEvalAgrees, TestOraclesAgree) evaluate
// one copy as compiled and one after VMOnly.
func VMOnly(conds []*Condition) {
	for _, c := range conds {
		for _, p := range []*condProg{&c.when, c.while} {
			if p != nil && p.prog == nil {
				panic("VMOnly: conditions compiled without their programs (use CompileVM)")
			}
			if p != nil {
				p.fast, p.gates, p.onlyGates, p.conj, p.tree, p.tests = nil, nil, false, nil, nil, nil
			}
		}
	}
}

// GatedVM turns off the closure trees in conds (from CompileVM) but keeps the gates: a
// condition runs in the VM where its gates pass, as before the trees. Its
// faults are the reference for a compiled condition's (a condition that
// reads p.X without the environment faults where its gates first pass).
func GatedVM(conds []*Condition) {
	for _, c := range conds {
		for _, p := range []*condProg{&c.when, c.while} {
			if p != nil && p.prog == nil {
				panic("GatedVM: conditions compiled without their programs (use CompileVM)")
			}
			if p != nil {
				p.fast, p.conj, p.tree, p.tests = nil, nil, nil, nil
			}
		}
	}
}
