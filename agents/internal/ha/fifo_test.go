package ha

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseLine(t *testing.T) {
	tests := []struct {
		line      string
		want      Line
		wantState State // "" when the line is no state
		wantErr   bool
	}{
		{line: `INSTANCE "web" MASTER 150`, want: Line{Kind: KindInstance, Name: "web", Word: "MASTER", Priority: 150}, wantState: Master},
		{line: `INSTANCE "web" BACKUP 100`, want: Line{Kind: KindInstance, Name: "web", Word: "BACKUP", Priority: 100}, wantState: Backup},
		// keepalived reports the configured priority with FAULT, not 0.
		{line: `INSTANCE "web" FAULT 150`, want: Line{Kind: KindInstance, Name: "web", Word: "FAULT", Priority: 150}, wantState: Fault},
		{line: `INSTANCE "web" STOP 150`, want: Line{Kind: KindInstance, Name: "web", Word: "STOP", Priority: 150}, wantState: Stopped},
		{line: `INSTANCE "web" DELETED 150`, want: Line{Kind: KindInstance, Name: "web", Word: "DELETED", Priority: 150}, wantState: Stopped},
		{line: `GROUP "sync-1" MASTER`, want: Line{Kind: KindGroup, Name: "sync-1", Word: "MASTER", Priority: -1}, wantState: Master},
		{line: `GROUP "sync-1" FAULT 0`, want: Line{Kind: KindGroup, Name: "sync-1", Word: "FAULT", Priority: 0}, wantState: Fault},
		{line: `INSTANCE "web" MASTER_RX_LOWER_PRI 150`, want: Line{Kind: KindInstance, Name: "web", Word: "MASTER_RX_LOWER_PRI", Priority: 150}},
		{line: `INSTANCE "web" BACKUP_PRIORITY 90`, want: Line{Kind: KindInstance, Name: "web", Word: "BACKUP_PRIORITY", Priority: 90}},
		{line: `INSTANCE web MASTER 150`, wantErr: true},
		{line: `VS [10.0.0.1]:tcp:80 UP`, wantErr: true},
		{line: `INSTANCE "web" MASTER 256`, wantErr: true},
		{line: `INSTANCE "web" MASTER 150 extra`, wantErr: true},
		{line: ``, wantErr: true},
	}
	for _, tt := range tests {
		got, err := ParseLine(tt.line)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseLine(%q) error = %v, want error %v", tt.line, err, tt.wantErr)
			continue
		}
		if tt.wantErr {
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseLine(%q) mismatch (-want +got):\n%s", tt.line, diff)
		}
		if s, ok := got.State(); s != tt.wantState || ok != (tt.wantState != "") {
			t.Errorf("ParseLine(%q).State() = %q, %v; want %q", tt.line, s, ok, tt.wantState)
		}
	}
}

// TestFIFO drives the reader on a real FIFO: lines buffered before it
// opened are dropped, later ones arrive stamped, a writer closing its end
// (keepalived at a reload) is no end of file, and close stops it.
func TestFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vrrp.fifo")
	if err := ensureFIFO(path); err != nil {
		t.Fatal(err)
	}
	if err := ensureFIFO(path); err != nil {
		t.Fatalf("ensureFIFO on an existing FIFO: %v", err)
	}
	writer := func() *os.File {
		w, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	w := writer()
	if _, err := w.WriteString("INSTANCE \"web\" BACKUP 150\nINSTANCE \"web\" MASTER 150\n"); err != nil {
		t.Fatal(err)
	}
	f, stale, err := openFIFO(path)
	if err != nil {
		t.Fatal(err)
	}
	if stale != 2 {
		t.Errorf("stale lines dropped = %d, want 2", stale)
	}
	lines := make(chan Line)
	var bad []error
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	go f.read(lines, func(err error) { bad = append(bad, err) }, func() time.Time { return at })
	expect := func(want Line) {
		t.Helper()
		select {
		case got := <-lines:
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("line mismatch (-want +got):\n%s", diff)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no line; want %+v", want)
		}
	}
	if _, err := w.WriteString("INSTANCE \"web\" FAULT 150\nnonsense\n"); err != nil {
		t.Fatal(err)
	}
	expect(Line{Kind: KindInstance, Name: "web", Word: "FAULT", Priority: 150, At: at})
	w.Close()
	w = writer()
	defer w.Close()
	if _, err := w.WriteString("INSTANCE \"web\" BACKUP 150\n"); err != nil {
		t.Fatal(err)
	}
	expect(Line{Kind: KindInstance, Name: "web", Word: "BACKUP", Priority: 150, At: at})
	if !f.same(path) {
		t.Error("same: false for the FIFO it has open")
	}
	f.close()
	if len(bad) != 1 {
		t.Errorf("bad lines reported: %v, want the one nonsense line", bad)
	}

	// A FIFO replaced by another, or a file where the FIFO should be.
	f, _, err = openFIFO(path)
	if err != nil {
		t.Fatal(err)
	}
	go f.read(lines, func(error) {}, time.Now)
	defer f.close()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if f.same(path) {
		t.Error("same: true after the FIFO was replaced by a file")
	}
	if _, _, err := openFIFO(path); err == nil {
		t.Error("openFIFO opened a regular file")
	}
	if err := ensureFIFO(path); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode()&os.ModeNamedPipe == 0 || st.Mode().Perm() != 0o600 {
		t.Errorf("after ensureFIFO: %v, %v; want a FIFO, mode 0600", st.Mode(), err)
	}
	if err := ensureFIFO(filepath.Join(path+".d", "x")); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ensureFIFO in a missing directory: %v", err)
	}
}
