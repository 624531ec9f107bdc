package loadd

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// Source measures a server's load, one sample at a time. It is what touches
// the host; Meter does the windowed maths.
type Source interface {
	// Sample reads the source at now and returns what it measured since its
	// previous call. A counter source's first call, and its first call
	// after a failure or a counter reset, only takes a baseline and returns
	// an empty Sample.
	Sample(ctx context.Context, now time.Time) (Sample, error)
	// Kind names the source: "system", "cgroup", "file" or "command".
	Kind() string
}

// Sample is one sample's share of the window: the window's busy is the sum
// of Busy over the sum of BusyOf, its waiting the sum of Waiting over the sum
// of WaitingOf (see the package documentation for what each source puts in).
type Sample struct {
	Busy, BusyOf       float64
	Waiting, WaitingOf float64
}

// empty reports whether the sample carries nothing (a baseline).
func (s Sample) empty() bool { return s.BusyOf == 0 && s.WaitingOf == 0 }

// Spec is a parsed --source value.
type Spec struct {
	// Kind is "system", "cgroup", "file" or "command".
	Kind string
	// Arg is the path (cgroup, file) or the shell command (command).
	Arg string
}

// ParseSpec parses "system", "cgroup:PATH", "file:PATH" or "command:CMD".
// Paths must be absolute.
func ParseSpec(s string) (Spec, error) {
	kind, arg, hasArg := strings.Cut(s, ":")
	switch kind {
	case "system":
		if hasArg {
			return Spec{}, fmt.Errorf("source %q: system takes no argument", s)
		}
		return Spec{Kind: kind}, nil
	case "cgroup", "file":
		if !filepath.IsAbs(arg) {
			return Spec{}, fmt.Errorf("source %q: want %s:/absolute/path", s, kind)
		}
		return Spec{Kind: kind, Arg: filepath.Clean(arg)}, nil
	case "command":
		if strings.TrimSpace(arg) == "" {
			return Spec{}, fmt.Errorf("source %q: want command:CMD", s)
		}
		return Spec{Kind: kind, Arg: arg}, nil
	default:
		return Spec{}, fmt.Errorf("source %q: want system, cgroup:PATH, file:PATH or command:CMD", s)
	}
}

// Open makes the Source the spec names on this host. commandTimeout bounds
// each run of a command source.
func (s Spec) Open(commandTimeout time.Duration) (Source, error) {
	switch s.Kind {
	case "system":
		return &SystemSource{StatPath: "/proc/stat"}, nil
	case "cgroup":
		return NewCgroupSource(s.Arg)
	case "file":
		return &FileSource{Path: s.Arg}, nil
	case "command":
		return &CommandSource{Command: s.Arg, Timeout: commandTimeout}, nil
	}
	return nil, errors.New("loadd: Open on a zero Spec")
}
