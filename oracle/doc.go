// Package oracle is actfuzz's library of conformance oracles: named,
// tested checks of what an RFC, a draft or a congestion control's own
// paper says an implementation must or must not do, each citing the
// section it comes from.
//
// An oracle is a corpus.ConditionSpec (the condition language of
// campaigns: state variables, prev.X, first.X, p.X, stretches, and the
// observer's derived variables and round-trip windows, corpus.DerivedVars
// and rtt_ago.X / rtt_max.X / held.X) with what makes it traceable: a statement, its
// source, the congestion controls and families (ccai.Info.Family) it
// applies to, and, where Linux deliberately departs from the RFC, the
// kernel file and function it follows instead.
//
// A campaign checks every oracle that applies to its congestion controls
// and subject unless it says otherwise (`oracles: all | none | [names]`);
// Select turns the choice into the conditions the campaign runs, each
// limited to the flows it applies to (ConditionSpec.Only), and names the
// oracles it skipped and why (a variable the subject does not report, a
// documented departure of that implementation).
//
// A variable that means something only in some states is checked only
// there: CUBIC's target in congestion avoidance of the Open state, BBR's
// cwnd floor outside loss recovery. An oracle that reported a stale
// variable would send a developer after a bug that is not there.
package oracle
