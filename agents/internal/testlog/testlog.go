// Package testlog holds what tests use to capture the logs of code that
// runs in other goroutines.
package testlog

import (
	"strings"
	"sync"
)

// Buffer collects writes safely across goroutines, e.g. a slog handler's
// output while a test reads it.
type Buffer struct {
	mu sync.Mutex
	b  strings.Builder
}

// Write implements io.Writer.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
