package act

import (
	"os/exec"
	"syscall"
)

// orphanProof makes the kernel kill a worker whose coordinator dies, even
// by SIGKILL, so a hung worker never outlives its campaign.
func orphanProof(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
