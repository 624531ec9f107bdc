package apply

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Store is the agent's state directory:
//
//	DIR/<name>            live files (haproxy.cfg)
//	DIR/<name>.staged     a candidate being validated, renamed over the live file
//	DIR/last-good/<name>  the live file before the latest swap, for rollback
//	DIR/state.json        {"revision": N, "files": {name: sha256}}: what the
//	                      daemons last loaded successfully
//	DIR/run/              daemons' runtime files (sockets, pid files)
type Store struct {
	// Dir is the state directory.
	Dir string
}

// State is the content of state.json: the revision the daemons run and the
// digest of each file they loaded. It is written only after a successful
// reload, so a live file whose digest differs was swapped in by an apply
// that never completed.
type State struct {
	// Revision is the live revision, 0 if none.
	Revision int64 `json:"revision"`
	// Files maps file names to the hex SHA-256 of the content loaded.
	Files map[string]string `json:"files,omitempty"`
}

// Digest is the hex SHA-256 of content, as recorded in State.Files.
func Digest(content string) string {
	sum := sha256.Sum256([]byte(content))
	return hex.EncodeToString(sum[:])
}

// Init creates the directory layout.
func (s Store) Init() error {
	for _, d := range []string{s.Dir, s.lastGoodDir(), filepath.Join(s.Dir, "run")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	return nil
}

// LivePath is where the daemon reads file name from.
func (s Store) LivePath(name string) string { return filepath.Join(s.Dir, name) }

// StagedPath is where a candidate for file name is written before checks.
func (s Store) StagedPath(name string) string { return s.LivePath(name) + ".staged" }

// LastGoodPath holds the previous live copy of file name.
func (s Store) LastGoodPath(name string) string { return filepath.Join(s.lastGoodDir(), name) }

func (s Store) lastGoodDir() string { return filepath.Join(s.Dir, "last-good") }

// Revision returns the live revision, 0 if none.
func (s Store) Revision() (int64, error) {
	st, err := s.State()
	return st.Revision, err
}

// State reads state.json; a missing file is the zero State.
func (s Store) State() (State, error) {
	var st State
	b, err := os.ReadFile(filepath.Join(s.Dir, "state.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("state.json: %w", err)
	}
	return st, nil
}

// SetState durably records what the daemons run.
func (s Store) SetState(st State) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(s.Dir, "state.json"), append(b, '\n'))
}

// Live returns the live content of file name and whether it exists.
func (s Store) Live(name string) (string, bool, error) {
	b, err := os.ReadFile(s.LivePath(name))
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	return string(b), err == nil, err
}

// Stage writes content as the candidate for file name.
func (s Store) Stage(name, content string) error {
	return writeSynced(s.StagedPath(name), []byte(content))
}

// Unstage removes the candidate for file name.
func (s Store) Unstage(name string) {
	_ = os.Remove(s.StagedPath(name))
}

// Swap renames the candidate for file name over the live file, first
// keeping a last-good copy of what the daemon runs: the live file when its
// digest is loaded (or unknown), else an existing last-good copy that
// matches. It reports whether a last-good copy is available to Restore.
func (s Store) Swap(name, loaded string) (canRestore bool, err error) {
	live, hadLive, err := s.Live(name)
	if err != nil {
		return false, err
	}
	lastGood, lastGoodErr := os.ReadFile(s.LastGoodPath(name))
	switch {
	case hadLive && (loaded == "" || Digest(live) == loaded):
		if err := writeAtomic(s.LastGoodPath(name), []byte(live)); err != nil {
			return false, fmt.Errorf("keep last-good %s: %w", name, err)
		}
		canRestore = true
	case lastGoodErr == nil && Digest(string(lastGood)) == loaded:
		canRestore = true
	default:
		if err := os.Remove(s.LastGoodPath(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return false, err
		}
	}
	if err := os.Rename(s.StagedPath(name), s.LivePath(name)); err != nil {
		return canRestore, err
	}
	return canRestore, syncDir(s.Dir)
}

// Restore puts the last-good copy of file name back in place, or removes
// the live file when Swap had no last-good copy to keep.
func (s Store) Restore(name string, canRestore bool) error {
	if !canRestore {
		if err := os.Remove(s.LivePath(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return syncDir(s.Dir)
	}
	b, err := os.ReadFile(s.LastGoodPath(name))
	if err != nil {
		return err
	}
	return writeAtomic(s.LivePath(name), b)
}

// writeAtomic replaces path with data through a synced temporary file in the
// same directory and a rename, so readers see the old or the new content.
func writeAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := writeSynced(tmp, data); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return syncDir(filepath.Dir(path))
}

func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
