package ha

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"syscall"
	"time"
)

// Line is one line keepalived writes to its vrrp_notify_fifo, e.g.
// `INSTANCE "web" MASTER 150`.
type Line struct {
	// Kind is INSTANCE (a vrrp_instance, named after its HA group) or
	// GROUP (a vrrp_sync_group).
	Kind string
	// Name is the instance's or sync group's name.
	Name string
	// Word is keepalived's word: MASTER, BACKUP, FAULT, STOP, DELETED, or
	// one that is not a state (MASTER_RX_LOWER_PRI, MASTER_PRIORITY,
	// BACKUP_PRIORITY).
	Word string
	// Priority is the instance's priority; -1 when the line has none.
	Priority int
	// At is when the agent read the line.
	At time.Time
}

// Line kinds.
const (
	KindInstance = "INSTANCE"
	KindGroup    = "GROUP"
)

var fifoLine = regexp.MustCompile(`^(INSTANCE|GROUP) "([^"]*)" ([A-Z_]+)(?: (\d+))?$`)

// ParseLine parses one line of the notify FIFO, without its newline.
func ParseLine(s string) (Line, error) {
	m := fifoLine.FindStringSubmatch(s)
	if m == nil {
		return Line{}, fmt.Errorf("notify fifo: unexpected line %q", s)
	}
	l := Line{Kind: m[1], Name: m[2], Word: m[3], Priority: -1}
	if m[4] != "" {
		p, err := strconv.Atoi(m[4])
		if err != nil || p > 255 {
			return Line{}, fmt.Errorf("notify fifo: priority out of range in %q", s)
		}
		l.Priority = p
	}
	return l, nil
}

// State is the VRRP state the line reports, and false for lines that
// only report a priority or a lower-priority advert.
func (l Line) State() (State, bool) {
	switch l.Word {
	case "MASTER":
		return Master, true
	case "BACKUP":
		return Backup, true
	case "FAULT":
		return Fault, true
	case "STOP", "DELETED":
		return Stopped, true
	}
	return "", false
}

// fifo reads the notify FIFO. It opens it read-write, so that the open
// never waits for keepalived and the reads never see an end of file when
// keepalived closes its end (as it does at each reload).
type fifo struct {
	path string
	file *os.File
	stop chan struct{} // closed to stop the reader
	done chan struct{} // closed when it has stopped
}

// openFIFO opens the FIFO at path and returns its reader once it has
// thrown away what was buffered before: the agent cannot tell when those
// transitions happened, and derives the states afresh instead.
func openFIFO(path string) (*fifo, int, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, 0, err
	}
	if st, err := f.Stat(); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		f.Close()
		return nil, 0, fmt.Errorf("%s is not a FIFO", path)
	}
	stale, err := drain(f)
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return &fifo{path: path, file: f, stop: make(chan struct{}), done: make(chan struct{})}, stale, nil
}

// drain reads what the FIFO holds now and returns how many lines it was.
func drain(f *os.File) (int, error) {
	buf := make([]byte, 64<<10)
	lines := 0
	for {
		if err := f.SetReadDeadline(time.Now().Add(10 * time.Millisecond)); err != nil {
			return 0, fmt.Errorf("notify fifo: %w", err)
		}
		n, err := f.Read(buf)
		for _, b := range buf[:n] {
			if b == '\n' {
				lines++
			}
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return lines, f.SetReadDeadline(time.Time{})
		}
		if err != nil {
			return lines, fmt.Errorf("notify fifo: %w", err)
		}
	}
}

// read sends each line to lines, stamped with now(), until close; lines
// that do not parse go to bad.
func (f *fifo) read(lines chan<- Line, bad func(error), now func() time.Time) {
	defer close(f.done)
	r := bufio.NewReader(f.file)
	for {
		s, err := r.ReadString('\n')
		if err != nil {
			if !errors.Is(err, os.ErrClosed) && !errors.Is(err, io.EOF) {
				bad(fmt.Errorf("notify fifo: %w", err))
			}
			return
		}
		l, err := ParseLine(s[:len(s)-1])
		if err != nil {
			bad(err)
			continue
		}
		l.At = now()
		select {
		case lines <- l:
		case <-f.stop:
			return
		}
	}
}

// same reports whether path is still the FIFO this reader has open (not
// removed or replaced).
func (f *fifo) same(path string) bool {
	if path != f.path {
		return false
	}
	open, err1 := f.file.Stat()
	now, err2 := os.Stat(path)
	return err1 == nil && err2 == nil && os.SameFile(open, now)
}

// close stops the reader and waits for it.
func (f *fifo) close() {
	close(f.stop)
	_ = f.file.Close()
	<-f.done
}

// ensureFIFO makes path a FIFO: created when missing, replaced when
// something else is there.
func ensureFIFO(path string) error {
	st, err := os.Lstat(path)
	switch {
	case err == nil && st.Mode()&os.ModeNamedPipe != 0:
		return nil
	case err == nil:
		if err := os.Remove(path); err != nil {
			return err
		}
	case !errors.Is(err, os.ErrNotExist):
		return err
	}
	err = syscall.Mkfifo(path, 0o600)
	if errors.Is(err, syscall.EEXIST) { // made meanwhile, by keepalived or the agent's other loop
		if st, err := os.Lstat(path); err == nil && st.Mode()&os.ModeNamedPipe != 0 {
			return nil
		}
	}
	if err != nil {
		return fmt.Errorf("mkfifo %s: %w", path, err)
	}
	return nil
}
