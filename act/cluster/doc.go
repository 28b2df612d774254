// Package cluster runs a campaign's simulations on many machines through
// NATS JetStream: a coordinator (`actfuzz run --nats URL`: the selector,
// the coverage store, the corpus, the checkpoints — everything act.Run
// does) publishes configurations, and worker hosts (`actfuzz worker --nats
// URL --procs N`) pull them, run them in N supervised worker processes
// (act.WorkerPool: the isolated executor of a local campaign) and publish
// the results back. The messages are those of the worker protocol
// (act/protocol.go): a Work per queue message, a Result per configuration.
//
// # Names
//
// Every campaign has an id (letters, digits, '-' and '_'; `run` derives it
// from the output directory and the campaign file, so a --resume finds its
// streams again). Several campaigns share one NATS system:
//
//	KV bucket  actfuzz-campaigns, key ID   the campaign header: act.CampaignHeader (campaign file,
//	                                       subject, build revision, the trace files' names and SHA-256),
//	                                       the chunk size, the protocol version
//	objects    actfuzz-traces, ID/i        trace file i of the campaign (link_traces:), gzipped
//	stream     ACTFUZZ_ID_WORK             subject actfuzz.ID.work.EPOCH (its coordinator's), work-queue retention: configuration batches
//	consumer   workers (on the work stream) durable pull consumer shared by every worker host
//	stream     ACTFUZZ_ID_RESULTS          subject actfuzz.ID.results, work-queue retention: one Result a message
//	consumer   coordinator-EPOCH           durable pull consumer of the coordinator
//	subject    actfuzz.ID.refused          (core NATS) a worker host that refuses the campaign says why
//	KV bucket  actfuzz-store-leases, key ID.coordinator  the coordinator's lease on the campaign
//	                                       ("One coordinator a campaign" below)
//
// and with store parts (run --store-parts N; "Store parts" below):
//
//	stream     ACTFUZZ_ID_STATES           subjects actfuzz.ID.states.J, work-queue retention: each result's share of part J
//	consumer   part-J (on the states stream)  durable pull consumer of store part J, filtered on its subject
//	subject    actfuzz.ID.part.J           (core NATS, request-reply) the coordinator's requests to store part J
//	objects    actfuzz-parts, ID/J, ID/J.snap  part J as the coordinator loaded it, and as it last snapshotted it
//
// # The campaign header's size
//
// The user's trace files can be megabytes, more than a message may hold
// (the server's max_payload, 1 MB by default), so they travel neither in
// the KV record nor in the Work messages: those carry each file's name
// and SHA-256 only (the sums that identify a campaign, workSum and the
// hosts' header check, depend on nothing else), and the content is in the
// object store actfuzz-traces, cut into chunks of max_payload less 1 KiB, at most 1 MiB
// (the coordinator puts it before the KV record, and deletes it at Close).
// A worker host that accepts a campaign reads its trace files (at most
// 256 MiB each), checks each against the SHA-256 the record names and
// refuses the campaign if one differs (TestTraceFileTampered). What is
// left in the record is the campaign file: a record over max_payload
// (or 1 MiB) is refused when the coordinator starts, naming its size and
// the limit (ErrHeaderTooLarge; `run` exits 2: bad input). A chunk that cannot be
// published (over max_payload) stops the campaign with an error naming
// its size and the limit instead of being retried for ever.
//
// # Work
//
// Run hands the executor batches of 64 configurations; the executor cuts
// each into chunks (Options.Chunk, default 8) and publishes one Work
// message per chunk, its BatchID the index of its first configuration,
// with header Actfuzz-Campaign (the id); four chunks at once, each
// publication waiting for its ack (a coordinator away from the server
// would otherwise publish a chunk a round trip). Each Result a worker publishes
// carries Actfuzz-Work: the SHA-256 of its chunk's campaign header, batch
// id and configurations in a canonical binary form (workSum; not of the
// message's bytes, since gob's type ids differ between processes and a
// resumed coordinator must recognize its predecessor's chunks). The consumer "workers" is a durable pull
// consumer with explicit ack: a worker host fetches a chunk, runs it,
// publishes its results and only then acks it. While a chunk runs the
// host sends InProgress heartbeats every AckWait/3, so a long chunk is not
// redelivered; a host that dies (kill -9, a lost machine) stops sending
// them, and after AckWait the chunk is redelivered to another host. The
// results do not depend on which host ran a chunk, nor on how often.
// Nothing else may make a chunk wait for its AckWait: a host asks for a
// chunk with a pull request of its own whose answer comes to an inbox it
// keeps while it serves the campaign, and waits for the server's answer
// (a chunk, or none), so a chunk delivered late (a loaded host or server,
// a slow link) is still received; nats.go's Fetch gives up after a timer
// of its own (1 s past the request's expiry), and a chunk the server
// delivers after that is dropped, counted delivered, and comes again only
// after AckWait (TestLateDeliveryNotLost; a 30 s stall of the campaign).
// The coordinator receives results on one pull subscription (nats.go's
// Messages) for the same reason.
// After MaxDeliver deliveries without an ack (a chunk that keeps killing
// its hosts) the server publishes a max-deliveries advisory: the
// coordinator, subscribed to it, deletes the chunk from the stream (its
// dead letter). Usually one configuration kills the hosts and the others
// of its chunk are innocent, so the chunk is not charged: each of its
// configurations that has no result yet is published again alone, as a
// chunk of one whose BatchID is retryBit (2^62) | its index — an id no
// chunk of a batch has (indices stay below 2^62), that depends only on
// the configuration, and that the coordinator checks like any chunk's
// (its sum covers that id). Only a configuration alone (such a retry, or
// a chunk of one) that reaches MaxDeliver becomes a "crash" fault finding,
// whose detail names it and says a host died on it each time; so the
// campaign goes on. The innocent configurations' results are merged in
// configuration order like any others: the findings and regions are those
// of a local run in which the guilty configuration crashed its worker
// process (TestDeadLetterChargesOneConfiguration). Finding the guilty one
// costs MaxDeliver more deliveries, each an AckWait. (A crash of a worker
// *process* never gets that far: the host's supervisor makes it the fault
// of its configuration, as on one machine.)
//
// A result over the server's max_payload (default 1 MB) goes in parts:
// each part a message of at most max_payload less 1 KiB, with header
// Actfuzz-Part "batch/index/i/n". The coordinator keeps the parts of a
// configuration (checked as a whole result is: campaign, known chunk,
// index, sum; a repeated part is a duplicate) until it has all n, then
// validates the whole; the parts held at once are bounded by
// 4×Options.MaxResult bytes: the first part of another result that would
// go over waits (naked, to come again 0.5 s later; Stats.Deferred) until
// those held are complete, whose parts are always taken, so results of
// many hosts interleaved in the stream all arrive (TestPartsDeferred). A
// malformed part is rejected and counted.
// The results do not depend on max_payload. A result over
// Options.MaxResult (default 8 MiB, recorded in the KV record, so the host
// knows it: about 900,000 distinct states of one simulation) is a cap, not
// a fault: its host publishes it without its states, with
// act.Result.StatesDropped its size, and the coordinator merges the rest
// (hits, fault, mean state, distances), so no finding is lost, and counts
// it (Stats.Dropped; the report's and `run`'s "capped" line,
// act.Report.StatesDropped). Every host drops the same results, so
// cluster runs with one MaxResult agree; they differ from a local run,
// which merges every state, only where a result was dropped
// (TestResultOverMaxResult). Only a result still over MaxResult without
// its states (hits without end) is not published: its host naks the
// chunk, which ends as a dead letter, and that configuration, retried
// alone, as a crash fault.
//
// # Results and determinism
//
// Workers publish one Result per configuration on actfuzz.ID.results with
// the chunk's Actfuzz-Work sum. The coordinator consumes them with its
// durable consumer and acks a result only once Run has merged it, so a
// coordinator that dies loses nothing the stream had. Run merges in
// configuration order, batch after batch, whatever the arrival order:
// results (regions at every k, findings, seed files) are those of a local
// run with the same lag (act.Options.Lag, the batches chosen ahead of the
// merge, recorded in the checkpoint; a cluster wants more than the local
// default of 2 to keep its hosts busy). A redelivered chunk's results come
// twice: the executor keeps one per configuration index and acks and
// counts the others (Stats.Duplicates).
//
// # Nothing from the queue is trusted
//
// The coordinator rejects, counts (Stats.Rejected, by reason) and acks,
// never merges: a message over Options.MaxResult bytes, one that is not a
// Result, one of another campaign, one for a chunk it never published
// (Stats "unknown batch"), one whose index is outside its chunk, one whose
// configuration sum does not match its chunk's, one whose states do not
// decode in the campaign's state space, whose mean state has the wrong
// length or whose hits name conditions the campaign lacks. A worker host
// terminates (Term, so it is never redelivered) and counts a Work that is
// oversized, malformed, of another campaign header, or whose indices do
// not match its BatchID.
//
// A rejected result that names a chunk and configuration rightly (a known
// chunk, its sum, an index inside it) but whose content is wrong (states
// that do not decode, a mean of the wrong length, no states) came from a
// worker host or from a publisher that copied one. If the genuine result
// still comes, nothing is lost. But a host with a bug publishes such a
// result and then acks its chunk, and no other would ever come: Run would
// wait for ever. So the coordinator watches each such configuration
// (spoiled.go): once its chunk is gone from the work stream (acked: a host
// publishes a chunk's results before it acks it) and every result
// published before that was received, it publishes the configuration
// again alone, under a new message id (Stats.Reissued). After 3 such
// publications whose results are rejected too, the campaign stops with an
// error naming the configuration (`run` exits 3): the bug is the build's,
// not the subject's, so it is not a finding (TestSpoiledResults).
// The same watch covers a result that never comes after its chunk was
// acked: one the server acknowledged and lost (a crash of its machine
// before it synced the stream, sync_interval) or a host's bug. The lowest
// configuration Run awaits is watched so: once its chunk is gone and every
// result published before was received, and none of its came within
// AckWait more, it is published again alone; after 3 such publications
// the campaign stops with an error naming it (TestSpoiledResults, "lost").
//
// These checks catch what is inconsistent, not a well-formed forgery: a
// publisher that knows a chunk can publish a plausible result for it
// before the worker host does. Keeping such publishers out is the job of
// NATS permissions: credentials (--nats-creds) that let only worker hosts
// publish on actfuzz.ID.results and only coordinators on actfuzz.ID.work.*
// and write the buckets (the KV bucket, and the object store of trace
// files, which hosts only read). Tested (TestRestrictedCreds, a campaign
// over trace files that runs as it runs locally while the server refuses
// each forgery), as users' publish deny lists:
//
//	worker hosts   actfuzz.*.work.*  $KV.actfuzz-campaigns.>  $O.actfuzz-traces.>
//	               $JS.API.STREAM.CREATE.>  $JS.API.STREAM.UPDATE.>  $JS.API.STREAM.DELETE.>
//	               $JS.API.STREAM.PURGE.>  $JS.API.STREAM.MSG.DELETE.>
//	coordinators   actfuzz.*.results
//
// (`nsc edit user --deny-pub …`; put the campaign id for * to confine a
// user to one campaign).
//
// # Several campaigns on one host
//
// A worker host serves at once every campaign of the KV bucket it
// accepts (`--campaign ID` restricts it to one), each with its own pool
// of worker processes (they run one campaign header each). Its --procs N
// are slots shared between them (share), and a slot runs one
// configuration: the host runs at most N simulations at once however
// many campaigns it serves (it may keep up to N processes per campaign,
// N of them busy), and the configurations of one chunk run at once in as
// many slots as are free (TestChunkRunsOverSlots), so a host of many
// procs keeps them busy with few chunks in flight, and a chunk's results
// come after one simulation's time, not its size's. A campaign holds the
// chunks it fetched, their configurations waiting in order for slots; a
// chunk's heartbeats go on while any of its configurations waits or runs,
// and it is acked once the results of all of them are published (naked,
// for another delivery, if one fails; the configurations of it not
// started are then not run). A free slot goes to the waiting campaign
// that holds the fewest, so campaigns that all have work get equal
// shares (to one slot). A campaign takes a slot, then runs in it a
// configuration it holds, or one of a chunk it fetches if one is there at
// once (it fetches only when none of its configurations waits); when the
// last configuration that waited starts, it asks for the next chunk
// without waiting for the answer, so that a host away from the server
// does not keep a slot idle for the round trip (a campaign's
// configurations that wait are then of two chunks at most: one chunk
// fetched ahead; bench/cluster-latency.sh at 2 ms: 365–366 → 390–424
// sims/s). If none is there, it
// gives the slot back and waits for a chunk without one (so a campaign
// without work holds none), then asks for slots for its configurations,
// their chunk's heartbeats keeping it the host's meanwhile. Where and in
// what order a chunk's configurations run does not change its results
// (TestWorkerServesTwoCampaigns).
//
// # Build revisions
//
// Seeds replay only on the build that wrote them, so a worker host whose
// corpus.ProgramVersion differs from the header's refuses the campaign: it
// logs "campaign ID was started by build X; this worker is build Y",
// publishes that on actfuzz.ID.refused (the coordinator logs and counts
// it) and never pulls its work; it goes on serving the campaigns it
// accepts.
//
// # Coordinator death and server restarts
//
// `run --resume` continues from the last checkpoint (act.Run): its
// configuration log replays the same configurations, in the same chunks
// with the same sums, so the executor purges the work stream (chunks of
// the dead coordinator), reads the results already in the results stream
// (unacked: not merged; for at most 10 s) and publishes again only the
// chunks not merged in the checkpoint that still miss a result
// (Stats.Skipped counts the others). With file storage the streams, the consumers and the KV bucket
// survive a restart of the NATS server; nats.go reconnects and both sides
// retry what failed meanwhile. A request the server held when it went
// down (killed, or restarted) is never answered: its answer went with the
// connection. So the requests that may wait long (a store part's, the
// object store's lookups, an object's put or read as a part loads) also
// end when the connection is restored, and are made again
// (reconnect.go; TestRequestAgainAfterReconnect): a checkpoint's request
// for the parts' object store, made as bench/cluster-chaos.sh killed the
// server, waited 3 minutes of its 10-minute deadline before, the campaign
// stopped meanwhile.
//
// One coordinator a campaign. Two coordinators of one id would delete
// (a fresh run deletes the campaign's streams) or consume each other's
// streams; the id comes from the absolute --out path and the campaign
// file, which two machines can share (one container image, one home
// directory layout). So a coordinator holds a lease on its campaign, key
// ID.coordinator of the leases bucket (LeasesBucket, which it makes;
// the lease code is the store parts' below, lease.go), before it touches
// anything of the campaign's, renewed every Options.Lease/4 (default
// 10 s). One started while the holder renews it fails with
// ErrCampaignHeld, naming the holder, and changes nothing: `run` exits 2,
// saying to stop the other or give another --out or --campaign-id (cli's
// TestRunCampaignCoordinatedTwice). A --resume after a kill -9 finds the
// dead coordinator's lease: it takes it over at once when the holder was
// a process of this host that is gone, else once the lease has not
// changed for Lease (a lost machine; a fresh run always waits that long,
// since a holder of its id is another machine's, whose host name may be
// this one's). A coordinator whose lease went stale (not renewed for
// 3/4 of Lease by its own clock: starved of CPU, stopped, its machine
// suspended, its server away) acts on nothing (no chunk published, no
// message acked, no store part asked: Executor.acting, checked before
// each) until it has renewed the lease by a compare-and-set on the
// revision it last wrote: that succeeds only if nobody took the lease
// meanwhile, and it carries on (TestCoordinatorStopped, a coordinator
// SIGSTOPped for three leases; TestServerRestart, a server away for
// three). One that finds its lease another's stops with ErrCampaignTaken
// (exit 3) and leaves the campaign's header, streams and objects to the
// new holder (TestCoordinatorLease, TestCoordinatorStopped). The
// decisions are a state machine of their own (leasestate.go), tested
// without a network or a clock against random schedules of stops,
// outages and takeovers (TestLeaseNeverTwoHolders). Durations are read
// from CLOCK_BOOTTIME, which counts a suspended machine's sleep (Go's
// monotonic clock does not). An act checked while the lease was fresh
// can still reach the server after a successor's takeover (the process
// stopped between the check and the sending, or the act still in its
// client's write buffer: TestCoordinatorStopped saw three chunks land so
// on a loaded machine); the server refuses it, since each coordinator's
// setup fences its predecessors off: the work stream takes only its
// epoch's subject, and earlier epochs' results consumers are deleted, so
// a late chunk matches no stream and a late ack no consumer
// (coordlease.go, "Fencing"; TestFencedAck). On one
// machine, the output directory's lock keeps a second `run` of the same
// --out out before it connects (corpus.LockDir).
//
// # What a coordinator costs
//
// Per simulation the coordinator receives one result, decodes its states
// once (the executor validates them and hands the batch to Run,
// act.Result.Decoded; decoding builds no hash index: a compact key set
// finds a repeated state) and merges them into the store. The states are
// sent as differences from the previous state (coverage batch encoding
// 2). Selection costs little next to the merge.
//
// The merge is the floor of a coordinator that keeps the whole store:
// every visit of every simulation updates its state's visit count and
// reservoir pool (a lookup in a table of millions of keys), and every new
// region its exact set at its level. The merge runs on all the
// coordinator's cores (16 shards per level; states outside S on a
// goroutine of their own), up to the parts that run on one goroutine
// each (decoding, the states outside S, Run's loop). What grows rare as a
// campaign ages is the new state, not the visit
// (BenchmarkCoordinatorRevisit), so the work of every visit must leave
// the coordinator: store parts (below), after which the coordinator's
// index merges only the states the parts found new.
//
// Run waits for the parts to merge each batch before it selects the next
// (their pools must be those of the merged prefix), so a campaign's rate
// is at most 64 simulations per (part merge + index merge + selection) of
// a batch (Stats.PartMergeWait); shares are decoded as they arrive, off
// that path. More parts, more cores per part and for the coordinator's
// index (both merge on all their cores), or pools versioned so that the
// parts merge ahead, shorten it.
//
// The index's merge is bound by cache misses: it merges 16 keys at a
// time, touching their slots first so that their misses overlap. It
// keeps no state key (coverage/slim.go): on each region at k = 2, a
// bitmap of its visited sub-regions at k = 1, 8 bytes a region (a space
// with more than 6 variables split at k = 2 keeps the keys); it names
// states by their region and bit (StateRef is 64 bits) and asks the parts
// for pools by the state's key; the walk down to a state (descend) picks
// among the sub-regions in the same order as with keys, so every answer
// is the same. Its bitmaps and its tables' keys grow in chunks that never
// move (coverage/table.go), and tables read from a checkpoint are sized
// as a table grown key by key (coverage's table.reserve). Selection's
// gradient finds the profile's nearest samples in k-d trees
// (act/nearest.go: the same samples, exactly), and a pool visit's
// configuration is read by decoding one record of the configuration log.
//
// On the native subject, the cheapest, selection and merge cost the
// coordinator 1.37–1.94% of a simulation's CPU between simulations 25,000
// and 94,000 of the aged bench campaign (1.59% over 60,000 to 90,000; 1%
// is the target); ns-3 and gVisor simulations cost 19 and about 90 times
// as much. What would reach 1% there, not built, is the index split among
// processes by level: the k = 2 regions and their bits (64% of the merge's lookups, few of the
// selector's probes), split by region as the index's shards are, with a
// level's probes sent to its owner in one batch. The measurements behind
// this section, dated, with their commands and the arithmetic of that
// split, are bench/results/coordinator-cost-summary-20261125.md.
//
// # Store parts
//
// With act.Options.StoreParts = Options.Parts = N (`run --nats URL
// --store-parts N`) the coverage store is split as coverage/parts.go
// describes: N parts, part J the pooled states (visit counts, reservoir
// pools and their PRNGs) of the shards sh with sh mod N = J, part 0 also
// the states outside S; and an index, the coordinator's, with every
// level's visited regions, fed only with the states the parts find new.
// Store processes (`actfuzz store --nats URL --part J`, one per part, on
// any machine) keep the parts:
//
//   - A worker host splits each result's states into N shares
//     (coverage.Batch.Share: the states of part J's shards with their
//     positions) and publishes share J on actfuzz.ID.states.J (header
//     Actfuzz-Share "i<index>" and the share's SHA-256; a share over
//     max_payload goes in pieces, Actfuzz-Part "i/n", that the part puts
//     together), before the result, which carries the shares' SHA-256
//     (act.Result.Shares, worker protocol 6; 7 moved them into the result's
//     binary part) instead of the states. When
//     the coordinator has a result, its shares are in the stream. The
//     N shares go at once, and after the simulation's slot is freed (up
//     to 4·procs results of a campaign wait for their publication; the
//     chunk is acked once they are published): a host away from the
//     server waits two round trips for a result's acks, not N+1, and
//     runs its next simulation meanwhile (bench/cluster-latency.sh).
//   - Run merges in configuration order as always; with parts it sends
//     every part a merge request (Seq, the merge's number since the load,
//     and per simulation its share's key, SHA-256 and config id). Part J
//     waits until it holds a share of each key with that SHA-256 (a share
//     of another content, a forgery, is never merged: TestStorePartsForgedShare),
//     merges them (coverage.Store.AddShares) and answers each simulation's
//     new states in the simulation's order (coverage.PartNews; in chunks of
//     max_payload through "news" requests, with their SHA-256). The index
//     merges the N parts' news (coverage.Store.AddNews: the new states in
//     the whole store's visit order) and returns what a whole store's
//     merge would. The symbolic step's branches, computed on the
//     coordinator, go to the parts as shares of its own (key
//     "l<epoch>.<merge>.<item>").
//   - The selector's queries are the index's. The draws of visits from
//     pools (ACT Method 1 line 8, Method 2 line 3) are read at once for
//     a whole selection (the configurations chosen between two merges):
//     act's selector picks them all first, then asks each part for the
//     pools of its states among them in one "pool" request (up to 1024
//     states; coverage.Store.Pools, the parts at once), which it answers
//     as of merge Seq (it never merges ahead: merges come from the
//     coordinator alone), then finishes each pick from the answers, its
//     draws from a stream of its own, so that the configurations are
//     those of picks finished one by one (act's TestSelectionAtOnce) and
//     of a whole store. A request a visit cost a campaign in steps 2
//     and 3 with its parts 1 ms from the server (bench/cluster-latency.sh,
//     each way) 150–174 ms of waiting a batch of 64 and about 60% of its
//     rate; one a part costs 2.9–4.4 ms (bench/results/parts-across-network-20261125.md). Requests and answers are in a binary
//     encoding of their own (wire.go): with gob a pool round trip cost
//     0.09 ms of CPU (0.9 µs now, BenchmarkPartWire).
//   - A checkpoint asks every part for a snapshot (it writes itself to
//     the object store actfuzz-parts) and copies their encodings into the
//     checkpoint file as they are read, checked by their SHA-256 but
//     neither decoded nor held, with the index's regions
//     (coverage.WriteSplitFrom): the coordinator never holds the whole
//     store, not even encoded, and a checkpoint costs it about a copy. It reads as the whole
//     store of a local run (coverage.ReadCheckpoint: `actfuzz report`,
//     --resume); Run's report is the index's, which has every count. A
//     checkpoint comes after 50 times the shortest duration of the last
//     three, the period at most doubling from one to the next and at most
//     10 minutes (act/pace.go).
//     Objects (parts, snapshots, trace files) go in chunks of at most 1 MB,
//     and a put the server could not keep up with (429: its stream's
//     incoming queue, 128 MB by default, was full) is put again, paced
//     (objects.go): a snapshot in chunks of 8 MB failed an aged campaign's
//     checkpoint. --resume reads the checkpoint's index and the parts'
//     keys, not their counts and pools (coverage.ReadSplit), and copies
//     the parts' encodings from the checkpoint file into the object store
//     as they are ("load" request), where each store process decodes its
//     part as it reads it, once it has dropped the part it held (a load
//     never holds two; BenchmarkPartReload): the coordinator holds
//     neither the whole store nor the parts' encodings at a resume
//     either. A new campaign loads empty
//     parts. The part count can change at a resume (to more parts after
//     one hit its cap): the checkpoint's parts are then split again one
//     new part at a time, each from the old parts that keep its shards,
//     read without the others, into files beside the checkpoint that
//     are removed once loaded (coverage.ReadSplitIn), so the coordinator
//     never holds the whole store (act's TestRunWithStoreParts resumes 2
//     parts as 1, 2 and 3).
//
// Shards are split by their keys' hash, each shard sees its keys in the
// whole store's order with the same PRNG, and the index gets the new
// states in the whole store's order: results do not depend on the parts,
// and a campaign with store parts ends as a local one, with the same
// store, byte for byte (TestStorePartsMatchLocal, TestStorePartsResume;
// act.TestRunWithStoreParts with the symbolic step).
//
// What is trusted: the coordinator checks a result's shares' count and
// size; the part merges only the share whose SHA-256 the result names;
// requests on actfuzz.ID.part.J come from the coordinator that loaded
// the part last (its epoch). With store parts, the worker hosts' deny
// list gains actfuzz.*.part.* and $O.actfuzz-parts.>, and store processes
// get one of their own:
//
//	store processes  actfuzz.*.work.*  actfuzz.*.results  $KV.actfuzz-campaigns.>  $O.actfuzz-traces.>
//	                 $JS.API.STREAM.CREATE.>  $JS.API.STREAM.UPDATE.>  $JS.API.STREAM.DELETE.>
//	                 $JS.API.STREAM.PURGE.S and $JS.API.STREAM.MSG.DELETE.S for each of the
//	                 campaign's streams S (a wildcard is a whole token; a store process
//	                 purges the stream of the parts' object store when it replaces a snapshot)
//
// (TestRestrictedCredsStoreParts: a campaign runs as locally while the
// server refuses a host's request to a part and write of a part's object,
// and a store process's work, result, campaign header and purge of the
// states stream). A store process refuses a campaign of another build, as
// worker hosts do.
//
// Failures. A merge the parts began is finished even if the campaign is
// interrupted, and so is a selection's pool draw, so the last checkpoint
// can be written. A store process that dies loses its part: Run stops
// with ErrPartLost, naming the part, when the part answers that it has
// none (the process restarted) or after Options.PartTimeout (two
// minutes) without an answer. `run` then continues by itself from the
// last checkpoint, as --resume does, with a new Executor that loads the
// parts again once a process serves the part (it waits, and says so
// every 10 s): a store process restarted by hand or by a supervisor takes
// its part over without the coordinator stopping, and what was merged
// after the checkpoint runs again, with the results of an uninterrupted
// run (TestStorePartDies; cli's TestRunStorePartRestarted), at most 10
// times per `run`.
//
// A standby store process. One process serves a part at a time: it
// holds the part's lease, key ID.J of the KV bucket LeasesBucket, which
// it renews every Lease/4 (StoreOptions.Lease, `actfuzz store --lease`,
// default 10 s). A second process started for the same part waits as a
// standby, subscribing to nothing (two would split the part's consumer).
// It takes the part over when the holder deletes its lease (it stopped:
// Ctrl-C, a supervisor's SIGTERM), at once, or when the lease has not
// changed for Lease by the standby's own clock (the holder was killed or
// its machine lost), or for the holder's Lease when that is longer: a
// holder's name in its lease ends with its period (host/pid/nonce/10s),
// so that a standby started with a shorter --lease does not take a live
// holder's part between two of its renewals (TestStoreLeaseLongerHeld;
// a coordinator's lease is kept the same way). A holder that could not
// renew its lease for 3/4 of Lease by its own clock, counted from the
// sending of its last renewal (a partition, a stopped or starved process),
// answers nothing and acks nothing until it has renewed it; a taker
// cannot see that renewal before it was sent, and waits Lease after it
// saw it: only durations measured on one machine are compared, never two
// machines' clocks, and two processes never serve one part. A failed
// renewal is tried again every Lease/16 (each try lasting Lease/8 at
// most), however long the server is away, each a compare-and-set on the
// revision the holder last wrote, so that a nats-server restarted, even
// after a kill -9 and for longer than the lease, costs no lease that
// nobody took (TestLeaseSurvivesServerRestart; a holder gave the lease up
// at Lease/2, then at 3/4 of Lease, before, and a coordinator exited 3 in
// bench/cluster-chaos.sh runs and when a server took 6–7 s to restart),
// and a renewal written whose answer was lost is recognised by the
// holder's name in the key. A holder that finds its lease taken stops
// serving the part and becomes a standby itself. The standby then answers the coordinator that it has no part,
// and `run` continues from its checkpoint as above: the part moves to the
// standby without anyone restarting a process (TestStorePartStandby,
// TestStoreLease; cli's TestRunStorePartRestarted with a standby). The
// coordinator watches the leases bucket: a request in flight to a holder
// that a standby replaced is asked of the new holder at once, and again
// at its first renewal (it subscribes to requests just after it takes the
// lease), instead of waiting up to 30 s for an answer that a stopped
// (SIGSTOP) or partitioned holder, whose subscription the server keeps
// until its pings fail, never gives (Stats.HolderChanges; in
// TestStorePartStandby a frozen holder's part is lost 1.1–1.2 s after it
// froze, with Lease 1 s; 31 s when it waited for the frozen one). A
// process restarted after a kill -9 is a standby to its own dead lease
// and serves after Lease. The coordinator makes the bucket (store
// processes may not make streams); store processes write their keys,
// which worker hosts need not: their deny list may add
// $KV.actfuzz-store-leases.>.
//
// A store process that stops serving a
// campaign gives back the shares it held (nak), and a coordinator makes
// the part consumers again when it starts, so a share held for a dead
// coordinator is delivered again at once. A part acks a merge's shares
// only when the next merge comes, by when the coordinator has acked their
// results (settle.go): acked at the merge, they were gone when the
// coordinator died before its acks, or lost another part in that merge,
// and the coordinator that continued from its checkpoint found the
// results in their stream and waited for shares no longer in theirs
// ("64 of 64 shares not received yet", exit 3 in bench/cluster-chaos.sh;
// TestStorePartsKilledBeforeAcks). Nor does a part ack a share of a
// simulation it merged as it arrives: one that did not see its consumer
// made again (away from a restarting server) acked shares a coordinator
// gone back to its checkpoint needed again
// (TestStorePartKeepsStaleLookingShare). And when a merge's shares stay
// missing for 20 s, the coordinator makes the part's consumer again
// (shares delivered to a process that died or gave the part up, or on a
// connection a server restart cut, would come back only after the
// consumer's AckWait, 10 minutes), then, 20 s later, publishes the
// merge's configurations again alone, whose hosts publish the same shares
// (redeliver.go; TestStorePartSharesRedelivered). A store process's parts can be
// capped (StoreOptions.Memory, `actfuzz store --memory`): a part cannot
// coarsen as a whole store does, so the merge that takes it over the cap
// is its last, and its answer says so (partReply.Capped); Run ends the
// campaign after that batch with a checkpoint and act.ErrStoreCapped, and
// it resumes with more parts or a larger cap (TestStorePartCapped). The
// campaign's memory budget, when given (--memory, memory:), caps the
// coordinator's index the same way, at the store's share of it
// (act.ErrIndexCapped; act's TestStorePartsIndexCapped): `run` says to
// resume with a larger --memory, since more parts do not shrink the
// index. The budget given comes with each part's "load" request, and a
// store process without --memory caps its part at the same share, so
// that every process of the campaign keeps to it, and a coordinator
// resumed with a larger budget raises it (cli's TestRunStoreCapped).
package cluster
