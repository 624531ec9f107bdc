package apply

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// diskFaults are the errors of a file system that refuses every write, not
// this one: it is full, over quota or read-only. They say nothing about the
// revision, which applies once the node's disk takes writes again, so the
// agent tries it again (Outcome.Retry) instead of holding it refused like
// one a daemon rejected. Each maps to what it means, in plain words.
var diskFaults = map[syscall.Errno]string{
	syscall.ENOSPC: "the node's disk is full",
	syscall.EDQUOT: "the node's disk quota is used up",
	syscall.EROFS:  "the node's file system is read-only",
}

// diskFault says err in plain words when a disk fault caused it, e.g.
// "no space left on device writing /var/lib/fulcrum-agent/bundles/r5-1/haproxy.cfg
// (the node's disk is full)"; ok is false for any other error.
func diskFault(err error) (words string, ok bool) {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return "", false
	}
	meaning, ok := diskFaults[errno]
	if !ok {
		return "", false
	}
	words = errno.Error()
	if where := faultPath(err); where != "" {
		words += " " + where
	}
	return words + " (" + meaning + ")", true
}

// faultPath names what the failed operation was doing to which file:
// "writing /path", "creating /path", "" when err carries no path.
func faultPath(err error) string {
	var pathErr *fs.PathError
	var linkErr *os.LinkError
	switch {
	case errors.As(err, &linkErr):
		return fmt.Sprintf("%s %s", opWords(linkErr.Op), linkErr.New)
	case errors.As(err, &pathErr):
		return fmt.Sprintf("%s %s", opWords(pathErr.Op), pathErr.Path)
	}
	return ""
}

// opWords is the os package's name of an operation as a participle.
func opWords(op string) string {
	switch op {
	case "mkdir", "mkdirtemp":
		return "creating"
	case "symlink":
		return "linking"
	case "rename":
		return "renaming to"
	case "remove", "unlinkat":
		return "removing"
	}
	return "writing" // write, open, sync, close, chmod
}

// failedOn is the outcome of an apply that err stopped at step ("stage",
// "swap"; "" for none) before it touched anything the daemons run. A disk
// fault is said in plain words and marked for a retry.
func failedOn(rev int64, step string, err error) Outcome {
	if words, ok := diskFault(err); ok {
		o := failed(rev, words+": nothing was changed, the running configuration keeps serving, "+
			"and the agent tries this revision again until the disk takes writes")
		o.Retry = true
		return o
	}
	if step == "" {
		return failed(rev, err.Error())
	}
	return failed(rev, step+": "+err.Error())
}

// isDiskFault reports whether err is one of diskFaults.
func isDiskFault(err error) bool {
	_, ok := diskFault(err)
	return ok
}
