package cli

import (
	"runtime/debug"
)

// version says which build this is: the module's version when installed
// with go install pkg@version, else the commit it was built from.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := info.Main.Version
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+modified"
			}
		}
	}
	if (v == "" || v == "(devel)") && rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		return "devel " + rev + modified
	}
	if v == "" {
		return "(devel)"
	}
	return v + " " + info.GoVersion
}
