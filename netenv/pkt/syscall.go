package pkt

// The syscalls the suite's congestion-control scripts make, mapped to the
// model; any other is unsupported, named.

// intArg is argument i as an integer, or ok false.
func intArg(sc *Syscall, i int) (int64, bool) {
	if i >= len(sc.Args) {
		return 0, false
	}
	a := sc.Args[i]
	if a.Kind == ExprArray && len(a.List) == 1 {
		a = a.List[0]
	}
	return a.Int, a.Kind == ExprInt
}

// wordArg is argument i as a word ("SOL_SOCKET"), or "".
func wordArg(sc *Syscall, i int) string {
	if i >= len(sc.Args) || sc.Args[i].Kind != ExprWord {
		return ""
	}
	return sc.Args[i].Name
}

// expectResult checks the script's expected return value against ours.
func expectResult(sc *Syscall, got int64) error {
	if sc.Result.Kind == ExprInt && sc.Result.Int != got {
		return mismatch("%s returned %d, script expects %d", sc.Name, got, sc.Result.Int)
	}
	return nil
}

func (in *interp) syscall(sc *Syscall) error {
	// A blocking call's end time ("...t") is when it returns: a connect
	// when the handshake completes, a write when the send buffer took the
	// last byte. The model's send buffer blocks the application by
	// itself (netenv/tcp app.go), so these are taken at their start;
	// other blocking calls are unsupported.
	if sc.HasEnd && sc.Name != "connect" && sc.Name != "write" && sc.Name != "send" {
		return unsupported("blocking %s with an end time (...)", sc.Name)
	}
	switch sc.Name {
	case "socket":
		// packetdrill maps the script's descriptors to the live ones,
		// so the number is the script's own.
		return nil
	case "bind", "fcntl":
		// Addresses and O_NONBLOCK: a write the model takes whole never
		// blocks, so blocking and non-blocking writes are alike.
		if sc.Result.Kind == ExprInt && sc.Result.Int < 0 {
			return unsupported("%s failing with %s", sc.Name, sc.Errno)
		}
		return nil
	case "listen":
		in.state = stateListen
		return expectResult(sc, 0)
	case "accept":
		if in.state != stateEstablished {
			return unsupported("accept before the handshake completes")
		}
		return nil
	case "connect":
		if in.state != 0 {
			return unsupported("connect in state %d", in.state)
		}
		in.state = stateSynSent
		in.synAt = in.sim.Now()
		in.ecnOK = in.set.ecn == 1
		flags := "S"
		if in.ecnOK {
			flags = "SEW"
		}
		in.emit(flags, 0, 0)
		return nil
	case "setsockopt":
		return in.setsockopt(sc)
	case "getsockopt":
		switch wordArg(sc, 2) {
		case "SO_ERROR":
			return nil
		case "SO_SNDBUF":
			return nil // reads back the doubled value: bookkeeping only
		}
		return unsupported("getsockopt %s", wordArg(sc, 2))
	case "write", "send":
		n, ok := intArg(sc, 2)
		if !ok || n < 0 {
			return unsupported("%s without a byte count", sc.Name)
		}
		if sc.Result.Kind == ExprInt && sc.Result.Int != n {
			return unsupported("a %s that does not complete (returns %d of %d)", sc.Name, sc.Result.Int, n)
		}
		if in.finSeq != 0 {
			return unsupported("%s after close", sc.Name)
		}
		if f := sc.Args; sc.Name == "send" && len(f) > 3 && !(f[3].Kind == ExprInt && f[3].Int == 0) {
			return unsupported("send flags (MSG_EOR and the like are not modelled)")
		}
		if err := in.ensureSender(); err != nil {
			return err
		}
		in.snd.Write(uint64(n))
		return nil
	case "close":
		return in.close(sc)
	}
	return unsupported("syscall %s", sc.Name)
}

func (in *interp) setsockopt(sc *Syscall) error {
	opt := wordArg(sc, 2)
	switch opt {
	case "SO_REUSEADDR", "SO_RCVBUF", "SO_LINGER", "TCP_NODELAY":
		// Addressing, the receive side; Nagle: a write the model takes
		// whole is sent as tcp_push does (a runt only at its end).
		return nil
	case "SO_SNDBUF":
		v, ok := intArg(sc, 3)
		if !ok || v <= 0 {
			return unsupported("setsockopt SO_SNDBUF without a size")
		}
		if in.snd != nil {
			return unsupported("SO_SNDBUF after the first write")
		}
		// Linux doubles the value (sock_setsockopt) for its overhead;
		// the model counts payload bytes.
		in.sndBuf = uint64(2 * v)
		return nil
	case "TCP_CONGESTION":
		if len(sc.Args) < 4 || sc.Args[3].Kind != ExprString {
			return unsupported("setsockopt TCP_CONGESTION without a name")
		}
		if in.snd != nil {
			return unsupported("TCP_CONGESTION after the first write")
		}
		in.set.congestion = sc.Args[3].Name
		return nil
	}
	return unsupported("setsockopt %s", opt)
}

// close sends our FIN (conn.go): only once every byte is acknowledged,
// since the model cannot put the FIN on its last data segment.
func (in *interp) close(sc *Syscall) error {
	if in.state != stateEstablished {
		return unsupported("close in state %d", in.state)
	}
	end := int64(1)
	if in.snd != nil {
		if in.snd.Sock().SndUna < in.snd.Bytes() {
			return unsupported("close with unacknowledged data (a FIN behind data is not modelled)")
		}
		end += int64(in.snd.Bytes())
	}
	in.finSeq = end
	in.state = stateFinWait1
	in.emit("F.", end, in.ourAck())
	return expectResult(sc, 0)
}
