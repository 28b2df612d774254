// Package ccai is the congestion-control contract of actfuzz, the registry of
// congestion-control algorithm implementations (CCAIs), and the algorithms
// themselves.
//
// The contract is modelled on Linux's struct tcp_congestion_ops. The TCP
// machinery (package netenv/tcp) owns a [Sock] and calls the [Algorithm] at
// the same points where Linux calls the ops: ssthresh when a loss is detected,
// cong_avoid on every ACK that may grow the window, set_state on every change
// of ca_state, cwnd_event on transmission start, idle restart and loss, and
// undo_cwnd when a reduction proves spurious. Optional interfaces add
// pkts_acked ([PktsAcker]), in_ack_event ([InAckEventer]), cong_control for
// rate-based algorithms ([CongController]), and named internal state
// ([VarExporter]) that campaigns use in their state space S and conditions.
//
// Windows are counted in packets and held in uint32, as in Linux, so that an
// algorithm's arithmetic wraps exactly where the kernel's would. Time is a
// [time.Duration] of simulated nanoseconds since the start of the run; an
// algorithm must never read the wall clock. Algorithms should use integer or
// fixed-point arithmetic for anything that feeds back into cwnd: compilers may
// fuse floating-point multiply-adds differently on different machines, and a
// seed must replay bit-identically everywhere.
//
// # Writing your own CCAI
//
// A user's module registers an algorithm by name from an init function and
// then uses it like a built-in one:
//
//	func init() {
//		ccai.Register(ccai.Info{
//			Name:        "mine",
//			Description: "my experimental AIMD",
//			New:         func() ccai.Algorithm { return &Mine{} },
//		})
//	}
//
// See examples/custom-ccai in the repository for a complete module, and its
// example_test.go for one run of its CCAI on the simulator. An
// algorithm whose state is plain data needs nothing more for the symbolic
// back-end's snapshots; one with closures, channels or unsafe pointers in
// its state implements [StateSaver], or every branch of a symbolic window
// runs from time zero.
//
// # Profiles
//
// [Sock.Profile] selects the kernel behaviour being modelled: [ProfileLinux]
// (today's kernel) or [ProfileLinux310] (Linux 3.10, the kernel the ACT paper
// tested). Differences that live in shared helpers are documented on the
// helper ([Sock.CongAvoidAI], [RenoUndoCwnd]); differences inside an
// algorithm are documented in that algorithm's file.
package ccai
