// Package corpus holds what a campaign hands to a CCAI's developer: seed
// files that replay a simulation configuration G = (e, [(p1,t1)…(pn,tn)])
// deterministically, findings (a seed plus the condition it hit, the time
// and the state at the hit), the conditions themselves (expr-lang
// expressions over the state), and replay.
//
// Seed files are versioned JSON (see [Seed]); every write is atomic (a
// temporary file, then rename), so a killed campaign never leaves a torn
// file; the temporary files of a killed process's writes are removed by
// the next process that locks the directory ([LockDir], [RemoveDebris]:
// one campaign process an output directory).
package corpus
