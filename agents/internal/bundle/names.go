// Package bundle is the contract between the API's compiler and the node
// agent: which file names a bundle may carry, the mode each is written
// with, and haproxy.d/servers.json, the list of every server's weight and
// administrative state that lets the agent apply such changes without a
// reload.
package bundle

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
)

// File names of the HAProxy unit. haproxy.cfg refers to the others as
// "${FULCRUM_CONF_DIR}/haproxy.d/<leaf>".
const (
	// MainFile is the configuration HAProxy loads; every bundle has it.
	MainFile = "haproxy.cfg"
	// IncludeDir holds the files haproxy.cfg refers to: maps, certificates,
	// check scripts, servers.json.
	IncludeDir = "haproxy.d"
	// ServersFile lists every server's weight and admin state.
	ServersFile = IncludeDir + "/servers.json"
)

// includeLeaf is the rule for a file name inside IncludeDir. Its first
// character rules out ".", ".." and hidden files; "/" and "\" are not
// allowed at all.
var includeLeaf = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// CheckNames accepts the file names of a bundle: MainFile, which is
// required, and any number of IncludeDir/<leaf>. Anything else (other
// directories, "..", absolute paths, deeper nesting) is refused.
func CheckNames(files map[string]string) error {
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names) // the same bundle always gets the same message
	for _, name := range names {
		if !validName(name) {
			return fmt.Errorf("refused file name %q: want %s or %s/<leaf> with <leaf> matching %s",
				name, MainFile, IncludeDir, includeLeaf)
		}
	}
	if _, ok := files[MainFile]; !ok {
		return fmt.Errorf("bundle lacks %s", MainFile)
	}
	return nil
}

func validName(name string) bool {
	if name == MainFile {
		return true
	}
	leaf, ok := strings.CutPrefix(name, IncludeDir+"/")
	return ok && includeLeaf.MatchString(leaf)
}

// Mode is the permission a file is written with: check scripts
// (haproxy.d/*.sh) are executable by their owner only, everything else is
// readable by its owner only, since bundles carry TLS private keys.
func Mode(name string) os.FileMode {
	if strings.HasPrefix(name, IncludeDir+"/") && strings.HasSuffix(name, ".sh") {
		return 0o700
	}
	return 0o600
}

// DirMode is the permission of every directory holding bundle files.
const DirMode os.FileMode = 0o700
