// Package pins reads the one list of pinned versions (versions.env) and fetches a pinned
// module through the Go module proxy: what pincheck and suites both start from.
package pins

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Read reads versions.env: NAME=value lines, comments and blank lines ignored; any other
// line is an error naming the file and line.
func Read(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pins := map[string]string{}
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, value, ok := strings.Cut(line, "=")
		if !ok || name == "" || value == "" || strings.ContainsAny(value, " \"'") {
			return nil, fmt.Errorf("%s:%d: not NAME=value: %q", path, i+1, line)
		}
		pins[name] = value
	}
	return pins, nil
}

// ModDir downloads module@version through the module proxy and gives its folder.
func ModDir(module, version string) (string, error) {
	if version == "" {
		return "", fmt.Errorf("versions.env pins no version of %s", module)
	}
	cmd := exec.Command("go", "mod", "download", "-json", module+"@"+version)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	var info struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &info); jerr != nil || info.Error != "" || err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %v %s", module, version, err, info.Error)
	}
	return info.Dir, nil
}
