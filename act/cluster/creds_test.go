package cluster

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/internal/race"
)

// operator is a NATS operator-mode setup (decentralized JWT auth, as NGS
// and `nsc` deployments use): an operator that signed an account with
// JetStream enabled, held by the server's memory resolver.
type operator struct {
	claims         *jwt.OperatorClaims
	account        nkeys.KeyPair
	accPub, accJWT string
	sysPub, sysJWT string // the system account JetStream needs
}

func newOperator(t *testing.T) operator {
	t.Helper()
	op, err := nkeys.CreateOperator()
	if err != nil {
		t.Fatal(err)
	}
	opPub, _ := op.PublicKey()
	oc := jwt.NewOperatorClaims(opPub)
	oc.Name = "actfuzz-test"
	opJWT, err := oc.Encode(op)
	if err != nil {
		t.Fatal(err)
	}
	claims, err := jwt.DecodeOperatorClaims(opJWT)
	if err != nil {
		t.Fatal(err)
	}
	account := func(name string, js bool) (nkeys.KeyPair, string, string) {
		kp, err := nkeys.CreateAccount()
		if err != nil {
			t.Fatal(err)
		}
		pub, _ := kp.PublicKey()
		ac := jwt.NewAccountClaims(pub)
		ac.Name = name
		if js {
			// JetStream is off for an account unless its JWT grants it.
			ac.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: -1, DiskStorage: -1, Streams: -1, Consumer: -1}
		}
		enc, err := ac.Encode(op)
		if err != nil {
			t.Fatal(err)
		}
		return kp, pub, enc
	}
	acc, accPub, accJWT := account("lab", true)
	_, sysPub, sysJWT := account("SYS", false)
	return operator{claims: claims, account: acc, accPub: accPub, accJWT: accJWT, sysPub: sysPub, sysJWT: sysJWT}
}

// server starts a server that trusts the operator, in operator mode.
func (op operator) server(t *testing.T) *server.Server {
	t.Helper()
	resolver := &server.MemAccResolver{}
	for pub, enc := range map[string]string{op.accPub: op.accJWT, op.sysPub: op.sysJWT} {
		if err := resolver.Store(pub, enc); err != nil {
			t.Fatal(err)
		}
	}
	return startServerWith(t, &server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true,
		MaxPayload: 8 << 20, TrustedOperators: []*jwt.OperatorClaims{op.claims}, AccountResolver: resolver, SystemAccount: op.sysPub})
}

// creds writes a credentials file (the user's JWT and NKey seed, the format
// `nsc generate creds` writes) for a new user signed by account.
func creds(t *testing.T, account nkeys.KeyPair, name string) (path string, seed []byte) {
	t.Helper()
	return credsWith(t, account, name, jwt.Permissions{})
}

// credsWith is creds for a user of the given permissions.
func credsWith(t *testing.T, account nkeys.KeyPair, name string, perm jwt.Permissions) (path string, seed []byte) {
	t.Helper()
	u, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	uPub, _ := u.PublicKey()
	uc := jwt.NewUserClaims(uPub)
	uc.Name = name
	uc.Permissions = perm
	uJWT, err := uc.Encode(account)
	if err != nil {
		t.Fatal(err)
	}
	seed, err = u.Seed()
	if err != nil {
		t.Fatal(err)
	}
	file, err := jwt.FormatUserConfig(uJWT, seed)
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(t.TempDir(), name+".creds")
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, seed
}

// A server in operator mode: a worker host and a coordinator reach it
// only with a credentials file of its account (--nats-creds), a user of
// an account it does not trust or a missing file is refused without the
// seed in the error, and a campaign runs over it as on a plain server.
func TestCredsFile(t *testing.T) {
	if race.Enabled {
		t.Skip("under -race: the same concurrent code: a campaign between a coordinator and worker hosts, as TestClusterMatchesLocal runs under -race; the server's authentication does not depend on -race")
	}
	op := newOperator(t)
	url := op.server(t).ClientURL()

	good, goodSeed := creds(t, op.account, "lab-user")
	stranger := newOperator(t) // an account the server never saw
	foreign, foreignSeed := creds(t, stranger.account, "stranger")
	for name, o := range map[string]ConnectOptions{
		"no credentials":     {URL: url},
		"untrusted account":  {URL: url, Creds: foreign},
		"missing creds file": {URL: url, Creds: filepath.Join(t.TempDir(), "none.creds")},
	} {
		nc, err := Connect(o)
		if err == nil {
			nc.Close()
			t.Errorf("%s: connected", name)
			continue
		}
		for _, seed := range [][]byte{goodSeed, foreignSeed} {
			if strings.Contains(err.Error(), string(seed)) {
				t.Errorf("%s: the error shows a seed: %v", name, err)
			}
		}
		t.Logf("%s: %v", name, err)
	}

	campaignOver(t, ConnectOptions{URL: url, Creds: good}, "creds", "with a credentials file")
}

// The permissions of the package documentation ("Nothing from the queue
// is trusted"), as credentials: worker hosts may not publish work nor
// write the buckets (the campaign headers, the trace files) nor change
// streams; coordinators may not publish results.
var (
	hostDeny = []string{"actfuzz.*.work.*", "$KV." + Bucket + ".>", "$O." + TraceBucket + ".>",
		"$JS.API.STREAM.CREATE.>", "$JS.API.STREAM.UPDATE.>", "$JS.API.STREAM.DELETE.>",
		"$JS.API.STREAM.PURGE.>", "$JS.API.STREAM.MSG.DELETE.>"}
	coordinatorDeny = []string{"actfuzz.*.results"}
)

// connectAs connects to url as the user of creds; the connection closes
// at the end of the test.
func connectAs(t *testing.T, url, creds, name string) *nats.Conn {
	t.Helper()
	nc, err := Connect(ConnectOptions{URL: url, Creds: creds, Name: name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// denyPub is permissions that deny publishing on subjects.
func denyPub(subjects ...string) jwt.Permissions {
	var p jwt.Permissions
	p.Pub.Deny.Add(subjects...)
	return p
}

// violated reports whether the server refused nc a publish on subject
// for the user's permissions (it says so asynchronously: -ERR), waiting
// up to 2 s for it.
func violated(nc *nats.Conn, subject string) bool {
	violation := func() bool {
		le := nc.LastError()
		return le != nil && strings.Contains(strings.ToLower(le.Error()), "permissions violation") && strings.Contains(le.Error(), `"`+subject+`"`)
	}
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline) && !violation(); {
		time.Sleep(10 * time.Millisecond)
	}
	return violation()
}

// With restricted credentials (one user for the worker hosts, one for the
// coordinator, as the package documentation says to set them) a campaign
// over trace files (the object store) runs as it runs locally, and what
// each is denied is refused by the server: a host cannot publish work,
// write a campaign header or a trace file, or purge a stream; the
// coordinator cannot publish a result.
func TestRestrictedCreds(t *testing.T) {
	if race.Enabled {
		t.Skip("under -race: the same concurrent code: a campaign over trace files between a coordinator and worker hosts, as TestWorkerServesTwoCampaigns runs under -race; the server's permissions do not depend on -race")
	}
	op := newOperator(t)
	s := op.server(t)
	hostCreds, _ := credsWith(t, op.account, "host", denyPub(hostDeny...))
	coordCreds, _ := credsWith(t, op.account, "coordinator", denyPub(coordinatorDeny...))
	connectAs := func(creds, name string) *nats.Conn { return connectAs(t, s.ClientURL(), creds, name) }

	c := traceCampaign(t)
	ref, refDir := reference(t, c)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	host, err := NewWorker(connectAs(hostCreds, "host"), WorkerOptions{Procs: 1, Poll: 100 * time.Millisecond, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- host.Serve(ctx) }()

	// refused publishes with a JetStream publish on nc (a user's
	// connection) and fails the test unless the server refused it for
	// the user's permissions.
	refused := func(nc *nats.Conn, what, subject string) {
		t.Helper()
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		pctx, pcancel := context.WithTimeout(ctx, time.Second)
		defer pcancel()
		_, err = js.Publish(pctx, subject, []byte("forged"))
		if err == nil {
			t.Errorf("%s: %s accepted", what, subject)
			return
		}
		// The server says why asynchronously (-ERR); the publish itself
		// only gets no acknowledgement.
		if le := nc.LastError(); !violated(nc, subject) {
			t.Errorf("%s: %s: %v, last error %v: not a permissions violation", what, subject, err, le)
		}
	}
	probeHost := connectAs(hostCreds, "host-probe")
	probeCoord := connectAs(coordCreds, "coordinator-probe")
	dir := t.TempDir()
	id := "restricted"
	rep, ex := clusterRun(t, context.Background(), c, connectAs(coordCreds, "coordinator"), dir, Options{ID: id}, func(ex *Executor, h act.CampaignHeader) {
		// The streams, the KV record and the trace objects are there.
		refused(probeHost, "a host publishing work", workSubject(id, ex.epoch))
		refused(probeHost, "a host writing a campaign header", "$KV."+Bucket+"."+id)
		refused(probeHost, "a host writing a trace file", "$O."+TraceBucket+".C.forged")
		refused(probeCoord, "a coordinator publishing a result", resultSubject(id))
		pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
		defer pcancel()
		if js, err := jetstream.New(probeHost); err != nil {
			t.Error(err)
		} else if stream, err := js.Stream(pctx, workStream(id)); err != nil {
			t.Errorf("a host reading the work stream's info: %v", err)
		} else if err := stream.Purge(pctx); err == nil {
			t.Error("a host purged the work stream")
		}
	}, act.Options{})
	sameAsLocal(t, "cluster with restricted credentials", ref, rep, refDir, dir)
	if st := ex.Stats(); st.Results != testBudget || st.RejectedTotal() != 0 || host.Stats().Chunks == 0 {
		t.Fatalf("%+v; the host ran %d chunks", st, host.Stats().Chunks)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// With store parts, the users of the package documentation ("Store
// parts"): worker hosts are also denied the parts' requests and their
// object store; store processes may write that object store but not
// publish work or results, write the campaign headers or trace files, nor
// change or purge the campaign's streams. The campaign runs as it runs
// locally, and each forgery is refused.
func TestRestrictedCredsStoreParts(t *testing.T) {
	if race.Enabled {
		t.Skip("under -race: the same concurrent code: store parts with a coordinator and worker hosts, as TestStorePartsMatchLocal runs under -race; the server's permissions do not depend on -race")
	}
	op := newOperator(t)
	s := op.server(t)
	hostCreds, _ := credsWith(t, op.account, "host", denyPub(append(slices.Clone(hostDeny), "actfuzz.*.part.*", "$O."+PartsBucket+".>")...))
	coordCreds, _ := credsWith(t, op.account, "coordinator", denyPub(coordinatorDeny...))
	id := "restricted-parts"
	// A store process replaces its snapshot objects, which purges the
	// object store's stream: it may purge that one, not the campaign's
	// (named per campaign: a NATS wildcard is a whole token).
	storeDeny := []string{"actfuzz.*.work.*", "actfuzz.*.results", "$KV." + Bucket + ".>", "$O." + TraceBucket + ".>",
		"$JS.API.STREAM.CREATE.>", "$JS.API.STREAM.UPDATE.>", "$JS.API.STREAM.DELETE.>"}
	for _, st := range []string{workStream(id), resultsStream(id), statesStream(id)} {
		storeDeny = append(storeDeny, "$JS.API.STREAM.PURGE."+st, "$JS.API.STREAM.MSG.DELETE."+st)
	}
	storeCreds, _ := credsWith(t, op.account, "store", denyPub(storeDeny...))
	connectAs := func(creds, name string) *nats.Conn { return connectAs(t, s.ClientURL(), creds, name) }
	c := testCampaign(t)
	ref, refDir := reference(t, c)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	host, err := NewWorker(connectAs(hostCreds, "host"), WorkerOptions{Procs: 1, Poll: 100 * time.Millisecond, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	wg.Go(func() { _ = host.Serve(ctx) })
	for j := range 2 {
		st, err := NewStore(connectAs(storeCreds, "store"), StoreOptions{Part: j, Poll: 100 * time.Millisecond, Logger: testLogger(t)})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { _ = st.Serve(ctx) })
	}
	// refused fails the test unless a publish on nc is refused for the
	// user's permissions.
	refused := func(nc *nats.Conn, what, subject string) {
		t.Helper()
		_ = nc.Publish(subject, []byte("forged"))
		_ = nc.Flush()
		if !violated(nc, subject) {
			t.Errorf("%s: %s: last error %v: not a permissions violation", what, subject, nc.LastError())
		}
	}
	probeHost := connectAs(hostCreds, "host-probe")
	probeStore := connectAs(storeCreds, "store-probe")
	dir := t.TempDir()
	rep, ex := clusterRun(t, context.Background(), c, connectAs(coordCreds, "coordinator"), dir, Options{ID: id, Parts: 2}, func(ex *Executor, _ act.CampaignHeader) {
		refused(probeHost, "a host asking a store part", partSubject(id, 0))
		refused(probeHost, "a host writing a part's object", "$O."+PartsBucket+".C.forged")
		refused(probeStore, "a store process publishing work", workSubject(id, ex.epoch))
		refused(probeStore, "a store process publishing a result", resultSubject(id))
		refused(probeStore, "a store process writing a campaign header", "$KV."+Bucket+"."+id)
		refused(probeStore, "a store process purging the states stream", "$JS.API.STREAM.PURGE."+statesStream(id))
	}, act.Options{StoreParts: 2, CheckpointEvery: 1}) // snapshots replace their objects
	sameAsLocal(t, "store parts with restricted credentials", ref, rep, refDir, dir)
	if st := ex.Stats(); st.Results != testBudget || st.RejectedTotal() != 0 || st.PartMerges == 0 {
		t.Fatalf("%+v", st)
	}
}
