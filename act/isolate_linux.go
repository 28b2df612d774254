package act

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// orphanProof makes the kernel kill a worker whose coordinator dies, even
// by SIGKILL, so a hung worker never outlives its campaign.
func orphanProof(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// schedStat stores in into, for each thread of process pid, its CPU
// time and run delay (time runnable but waiting for a CPU) in ns, from
// /proc/PID/task/TID/schedstat ("run_ns wait_ns slices"), and whether it
// is runnable (state R in /proc/PID/task/TID/stat). It says whether the
// kernel gave any.
func schedStat(pid int, into map[int]threadTimes) bool {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	buf := make([]byte, 512)
	read := false
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		fields := bytes.Fields(readSmall(dir+"/"+t.Name()+"/schedstat", buf))
		if len(fields) < 2 {
			continue // a thread that has just exited
		}
		r, err1 := strconv.ParseInt(string(fields[0]), 10, 64)
		w, err2 := strconv.ParseInt(string(fields[1]), 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		// stat: "tid (comm) S …"; comm may hold spaces and parentheses.
		stat := readSmall(dir+"/"+t.Name()+"/stat", buf)
		i := bytes.LastIndexByte(stat, ')')
		runnable := i >= 0 && i+2 < len(stat) && stat[i+2] == 'R'
		into[tid] = threadTimes{run: r, wait: w, runnable: runnable}
		read = true
	}
	return read
}

// readSmall reads the start of a small file into buf (nil on error).
func readSmall(path string, buf []byte) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	n, _ := f.Read(buf)
	return buf[:n]
}

// resetPeakRSS makes this process's peak RSS (VmHWM) its current RSS
// (clear_refs 5, Linux ≥ 4.0), so that VmHWM read at the end of a
// simulation is the peak of that simulation. It says whether it could.
func resetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// peakRSS is this process's peak RSS since resetPeakRSS.
func peakRSS() (int64, error) { return statusBytes("/proc/self/status", "VmHWM:") }
