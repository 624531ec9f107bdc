// Package disktest gives tests a small file system of their own to fill up
// or make read-only: a tmpfs, which only root may mount. Tests that use it
// skip elsewhere, like the ones that need network namespaces.
package disktest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// Tmpfs mounts a tmpfs of size bytes on a new temporary directory, which
// it returns, and unmounts it at cleanup. It skips the test where it cannot
// mount one (not root).
func Tmpfs(t testing.TB, size int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: mounts a tmpfs")
	}
	dir := t.TempDir()
	if err := unix.Mount("fulcrum-test", dir, "tmpfs", 0, "mode=0700,size="+strconv.Itoa(size)); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) }) // before TempDir's removal
	return dir
}

// ReadOnly remounts the tmpfs at dir read-only, or read-write again.
func ReadOnly(t testing.TB, dir string, readOnly bool) {
	t.Helper()
	flags := uintptr(unix.MS_REMOUNT)
	if readOnly {
		flags |= unix.MS_RDONLY
	}
	if err := unix.Mount("fulcrum-test", dir, "tmpfs", flags, ""); err != nil {
		t.Fatalf("remount %s (read-only %t): %v", dir, readOnly, err)
	}
}

// Fill takes every free page of dir's file system but free, in files of one
// page each, and returns a function that removes them all.
func Fill(t testing.TB, dir string, free int) (release func()) {
	t.Helper()
	page := make([]byte, os.Getpagesize())
	var pages []string
	for {
		path := filepath.Join(dir, fmt.Sprintf("filler-%d", len(pages)))
		err := os.WriteFile(path, page, 0o600)
		if errors.Is(err, syscall.ENOSPC) {
			_ = os.Remove(path)
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, path)
	}
	if len(pages) < free {
		t.Fatalf("only %d pages free, want %d", len(pages), free)
	}
	remove := func(paths []string) {
		for _, p := range paths {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
		}
	}
	remove(pages[:free])
	return func() { remove(pages[free:]) }
}
