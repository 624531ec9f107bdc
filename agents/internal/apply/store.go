package apply

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strconv"

	"fulcrum/agents/internal/bundle"
)

// Store is the agent's state directory:
//
//	DIR/bundles/<id>/     one directory per staged file set, never modified
//	                      once written: haproxy.cfg, haproxy.d/<leaf>,
//	                      keepalived.conf, keepalived.d/<leaf>
//	DIR/live -> bundles/<id>       the live set: FULCRUM_CONF_DIR, a path
//	                               that stays the same across applies
//	DIR/last-good -> bundles/<id>  the set the daemons ran before the
//	                               latest swap
//	DIR/state.json        {"revision": N, "files": {name: sha256}}: what
//	                      the daemons last loaded successfully
//	DIR/state.json.next   the record of the revision an apply is making
//	                      live, written before it touches anything
//	DIR/runtime-pending   present while server changes are sent through
//	                      HAProxy's runtime API, until the files match them
//	DIR/confirm-watch.json  while the live revision awaits confirmation:
//	                      its deadline and the bundle to go back to (Watch)
//	DIR/run/              the daemons' runtime files (sockets, pid files)
//
// Swapping a set in is one rename of a symlink, so the configuration and the
// files it refers to change at the same instant, files the new set lacks
// disappear with the old set, and rollback is the same rename back.
type Store struct {
	// Dir is the state directory.
	Dir string
}

// Names of the links and directories inside Store.Dir.
const (
	liveLink     = "live"
	lastGoodLink = "last-good"
	bundlesDir   = "bundles"
	runDir       = "run"
	stateFile    = "state.json"
	nextState    = "state.json.next"
	pendingFile  = "runtime-pending"
	watchFile    = "confirm-watch.json"
)

// State is the content of state.json: the revision the daemons run and the
// digest of each file they loaded. It is written only after a successful
// reload (or runtime update), so a live set whose digests differ was swapped
// in by an apply that never completed.
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

// Digests maps each file name of files to the Digest of its content.
func Digests(files map[string]string) map[string]string {
	d := make(map[string]string, len(files))
	for name, content := range files {
		d[name] = Digest(content)
	}
	return d
}

// Init creates the directory layout and moves a configuration left by an
// agent that kept a single DIR/haproxy.cfg into it.
func (s Store) Init() error {
	for _, d := range []string{s.Dir, filepath.Join(s.Dir, bundlesDir), s.RunDir()} {
		if err := os.MkdirAll(d, bundle.DirMode); err != nil {
			return err
		}
	}
	return s.migrateSingleFile()
}

// LiveDir is the stable path of the live set, given to HAProxy as
// FULCRUM_CONF_DIR: its haproxy.cfg is what HAProxy loads, its
// keepalived.conf what keepalived loads.
func (s Store) LiveDir() string { return filepath.Join(s.Dir, liveLink) }

// RunDir holds the daemons' sockets and pid files (FULCRUM_RUN_DIR).
func (s Store) RunDir() string { return filepath.Join(s.Dir, runDir) }

// Revision returns the live revision, 0 if none.
func (s Store) Revision() (int64, error) {
	st, err := s.State()
	return st.Revision, err
}

// State reads state.json; a missing file is the zero State.
func (s Store) State() (State, error) {
	var st State
	b, err := os.ReadFile(filepath.Join(s.Dir, stateFile))
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("%s: %w", stateFile, err)
	}
	return st, nil
}

// SetState durably records what the daemons run.
func (s Store) SetState(st State) error {
	if err := s.PrepareState(st); err != nil {
		return err
	}
	return s.CommitState()
}

// PrepareState durably writes st beside state.json, for CommitState. An
// apply prepares its record before it touches the daemons: committing it is
// a rename, which takes no space, so a full disk cannot leave the daemons
// running a revision the agent could not record.
func (s Store) PrepareState(st State) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	path := filepath.Join(s.Dir, nextState)
	_ = os.Remove(path)
	if err := writeSynced(path, append(b, '\n'), 0o600); err != nil {
		_ = os.Remove(path) // what was written of it takes space a retry needs
		return err
	}
	return nil
}

// CommitState makes the state PrepareState wrote the recorded one.
func (s Store) CommitState() error {
	if err := os.Rename(filepath.Join(s.Dir, nextState), filepath.Join(s.Dir, stateFile)); err != nil {
		return err
	}
	return syncDir(s.Dir)
}

// DiscardState removes a prepared state that was not committed; there is
// none after CommitState.
func (s Store) DiscardState() {
	_ = os.Remove(filepath.Join(s.Dir, nextState))
}

// SetRuntimePending durably marks (or clears) a runtime update in progress.
// An agent that dies with the mark set left HAProxy's runtime settings
// matching neither the live files nor the previous ones.
func (s Store) SetRuntimePending(pending bool) error {
	path := filepath.Join(s.Dir, pendingFile)
	if pending {
		return writeAtomic(path, nil)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return syncDir(s.Dir)
}

// RuntimePending reports whether a runtime update was marked and not
// cleared.
func (s Store) RuntimePending() bool {
	_, err := os.Stat(filepath.Join(s.Dir, pendingFile))
	return err == nil
}

// Watch reads the confirm watch; nil when there is none.
func (s Store) Watch() (*Watch, error) {
	b, err := os.ReadFile(filepath.Join(s.Dir, watchFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var w Watch
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("%s: %w", watchFile, err)
	}
	return &w, nil
}

// SetWatch durably records the confirm watch, or removes it when w is nil.
// The file holds the previous bundle's files, keys included, so it is
// private to the agent like the sets.
func (s Store) SetWatch(w *Watch) error {
	path := filepath.Join(s.Dir, watchFile)
	if w == nil {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return syncDir(s.Dir)
	}
	b, err := json.Marshal(w)
	if err != nil {
		return err
	}
	return writeAtomic(path, append(b, '\n'))
}

// Live returns the files of the live set, nil when there is none.
func (s Store) Live() (map[string]string, error) { return s.linkedFiles(liveLink) }

// LastGood returns the files of the last-good set, nil when there is none.
func (s Store) LastGood() (map[string]string, error) { return s.linkedFiles(lastGoodLink) }

// Stage writes files as a new set for revision rev and returns its
// directory, which the caller checks and then hands to Swap. Files get
// bundle.Mode, directories bundle.DirMode; everything is synced.
func (s Store) Stage(rev int64, files map[string]string) (string, error) {
	if err := bundle.CheckNames(files); err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp(filepath.Join(s.Dir, bundlesDir), "r"+strconv.FormatInt(rev, 10)+"-")
	if err != nil {
		return "", err
	}
	if err := writeFiles(dir, files); err != nil {
		_ = os.RemoveAll(dir)
		return "", err
	}
	return dir, syncDir(filepath.Dir(dir))
}

// Swap makes the staged set live. It first points last-good at the set
// the daemons run: the live one when its digests are those loaded (or
// nothing was recorded), else the current last-good when it matches
// loaded. It returns that set's directory for Restore, "" when there is
// none.
func (s Store) Swap(staged string, loaded map[string]string) (restore string, err error) {
	restore, err = s.runningSet(loaded)
	if err != nil {
		return "", err
	}
	if err := s.link(lastGoodLink, restore); err != nil {
		return "", fmt.Errorf("keep last-good: %w", err)
	}
	return restore, s.link(liveLink, staged)
}

// Restore makes dir the live set again, or removes the live set when dir is
// "" (there was nothing before).
func (s Store) Restore(dir string) error { return s.link(liveLink, dir) }

// Prune removes every set that is neither live nor last-good: candidates
// that failed, older generations, and leftovers of an interrupted apply.
func (s Store) Prune() error {
	keep := map[string]bool{s.target(liveLink): true, s.target(lastGoodLink): true}
	entries, err := os.ReadDir(filepath.Join(s.Dir, bundlesDir))
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if dir := filepath.Join(s.Dir, bundlesDir, e.Name()); !keep[dir] {
			errs = append(errs, os.RemoveAll(dir))
		}
	}
	return errors.Join(errs...)
}

// runningSet returns the directory of the set whose digests are loaded
// (see Swap), or "".
func (s Store) runningSet(loaded map[string]string) (string, error) {
	for _, link := range []string{liveLink, lastGoodLink} {
		files, err := s.linkedFiles(link)
		if err != nil {
			return "", err
		}
		if files == nil {
			continue
		}
		if maps.Equal(Digests(files), loaded) || (link == liveLink && len(loaded) == 0) {
			return s.target(link), nil
		}
	}
	return "", nil
}

// target returns the directory a link points to, "" when it does not exist.
func (s Store) target(link string) string {
	t, err := os.Readlink(filepath.Join(s.Dir, link))
	if err != nil {
		return ""
	}
	if !filepath.IsAbs(t) {
		t = filepath.Join(s.Dir, t)
	}
	return t
}

// linkedFiles reads the set a link points to; nil when the link is absent
// or dangling.
func (s Store) linkedFiles(link string) (map[string]string, error) {
	dir := s.target(link)
	if dir == "" {
		return nil, nil
	}
	files, err := ReadFiles(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return files, err
}

// link atomically points DIR/<name> at dir (relative, so that the state
// directory can move), or removes it when dir is "".
func (s Store) link(name, dir string) error {
	path := filepath.Join(s.Dir, name)
	if dir == "" {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return syncDir(s.Dir)
	}
	rel, err := filepath.Rel(s.Dir, dir)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	_ = os.Remove(tmp)
	if err := os.Symlink(rel, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return syncDir(s.Dir)
}

// ReadFiles returns the files of a set directory keyed by bundle name
// ("haproxy.cfg", "haproxy.d/<leaf>").
func ReadFiles(dir string) (map[string]string, error) {
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		files[filepath.ToSlash(rel)] = string(b)
		return err
	})
	return files, err
}

// writeFiles writes a set into the empty directory dir. Every part's
// directory exists, even when empty, so that a configuration may refer to
// it.
func writeFiles(dir string, files map[string]string) error {
	for _, p := range bundle.Parts {
		if p.Dir == "" {
			continue
		}
		if err := os.Mkdir(filepath.Join(dir, p.Dir), bundle.DirMode); err != nil {
			return err
		}
	}
	for name, content := range files {
		if err := writeSynced(filepath.Join(dir, name), []byte(content), bundle.Mode(name)); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	for _, p := range bundle.Parts {
		if p.Dir == "" {
			continue
		}
		if err := syncDir(filepath.Join(dir, p.Dir)); err != nil {
			return err
		}
	}
	return syncDir(dir)
}

// migrateSingleFile converts a state directory written by an agent that
// kept a single DIR/haproxy.cfg and a DIR/last-good/ directory.
func (s Store) migrateSingleFile() error {
	legacy := filepath.Join(s.Dir, bundle.MainFile)
	if fi, err := os.Lstat(legacy); err == nil && fi.Mode().IsRegular() {
		if err := s.migrateLiveFile(legacy); err != nil {
			return fmt.Errorf("migrate %s: %w", legacy, err)
		}
	}
	if fi, err := os.Lstat(filepath.Join(s.Dir, lastGoodLink)); err == nil && fi.IsDir() {
		return os.RemoveAll(filepath.Join(s.Dir, lastGoodLink))
	}
	return nil
}

// migrateLiveFile moves the single-file configuration into a set, taking
// the copy state.json says HAProxy loaded. It leaves legacy as a link to
// live/haproxy.cfg, so that a master started by the older agent, which
// rereads that path on reload, loads the live set.
func (s Store) migrateLiveFile(legacy string) error {
	st, err := s.State()
	if err != nil {
		return err
	}
	content, err := os.ReadFile(legacy)
	if err != nil {
		return err
	}
	prev, err := os.ReadFile(filepath.Join(s.Dir, lastGoodLink, bundle.MainFile))
	loaded := st.Files[bundle.MainFile]
	if err == nil && Digest(string(content)) != loaded && Digest(string(prev)) == loaded {
		content = prev // an apply was interrupted after its swap
	}
	dir, err := s.Stage(st.Revision, map[string]string{bundle.MainFile: string(content)})
	if err != nil {
		return err
	}
	if err := s.link(liveLink, dir); err != nil {
		return err
	}
	_ = os.Remove(legacy + ".staged")
	if err := os.Remove(legacy); err != nil {
		return err
	}
	return os.Symlink(filepath.Join(liveLink, bundle.MainFile), legacy)
}

// writeAtomic replaces path with data through a synced temporary file in the
// same directory and a rename, so readers see the old or the new content.
func writeAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	_ = os.Remove(tmp)
	if err := writeSynced(tmp, data, 0o600); err != nil {
		_ = os.Remove(tmp) // what was written of it takes space a retry needs
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return syncDir(filepath.Dir(path))
}

// writeSynced creates path with exactly mode (whatever the umask) and syncs
// it.
func writeSynced(path string, data []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
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
