package rttest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The module's layers, bottom up. A package may import its own layer and
// the layers below it, never one above (HACKING.md, "Layers"):
// internal/ is what several of them share (syscalls, test
// helpers): the bottom. The building blocks (rtapi/hist, rtapi/shm,
// rtapi/ipc, rtapi/msg: histograms, segments, the primitives in them, the
// message logger) need nothing of an RT, and rtapi itself is made of them.
// kerneldetect reads files and knows nothing else, flavors (public names
// and Select, over internal/backend) say how a thread sleeps, rtapi is the API users import, the other rtapi/* build on
// it, and examples use them all.
const (
	layerInternal = iota
	layerBlocks
	layerKerneldetect
	layerFlavors
	layerRTAPI
	layerRTAPISub
	layerExamples
)

var layerNames = []string{"internal/*", "rtapi/{hist,shm,ipc,msg}", "kerneldetect", "flavors, internal/backend", "rtapi", "rtapi/*", "examples/*"}

// allowedUpward lists the imports that cross the layers upward on
// purpose, each with its reason. Keep it empty: an entry here is a design
// decision the reviewer must agree with.
var allowedUpward = map[[2]string]string{}

// allowedUpwardInTests is the same for tests' imports only.
var allowedUpwardInTests = map[[2]string]string{
	// The simulator registers itself with rtapi as a database/sql driver
	// does, so the library never imports it; rtapi's own tests open the
	// sim flavor and link it with a blank import (rtapi/sim_link_test.go).
	{"rtapi", "rtapi/sim"}: "rtapi's tests link the sim driver",
}

// restrictedModules are the third-party modules only some layers may use
// in library code (tests may use any module go.mod lists).
var restrictedModules = map[string][]int{
	// Only where an issue asks: the Prometheus exporter and its example.
	"github.com/prometheus/client_golang": {layerRTAPISub, layerExamples},
	// A test dependency, never in a library's own code.
	"github.com/stretchr/testify": {},
}

// layerOf returns the layer of a package path relative to the module.
func layerOf(rel string) (int, bool) {
	switch first, _, _ := strings.Cut(rel, "/"); {
	case rel == "internal/backend" || strings.HasPrefix(rel, "internal/backend/"):
		return layerFlavors, true // the backends behind flavors
	case first == "internal":
		return layerInternal, true
	case rel == "kerneldetect":
		return layerKerneldetect, true
	case rel == "flavors":
		return layerFlavors, true
	case rel == "rtapi":
		return layerRTAPI, true
	case blocks[rel]:
		return layerBlocks, true
	case first == "rtapi":
		return layerRTAPISub, true
	case first == "examples":
		return layerExamples, true
	}
	return 0, false
}

// blocks are the rtapi/* packages below rtapi (layerBlocks).
var blocks = map[string]bool{"rtapi/hist": true, "rtapi/shm": true, "rtapi/ipc": true, "rtapi/msg": true}

// listedPackage is what go list -json says of one package.
type listedPackage struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Error        *struct{ Err string }
}

// layerViolations returns every import among pkgs (paths in module mod)
// that points upward, leaves the known layers, or uses a restricted
// module where it may not; one line each.
func layerViolations(mod string, pkgs []listedPackage) []string {
	var bad []string
	for _, p := range pkgs {
		rel, ok := strings.CutPrefix(p.ImportPath, mod+"/")
		if !ok {
			bad = append(bad, fmt.Sprintf("%s: not under the module %s", p.ImportPath, mod))
			continue
		}
		from, ok := layerOf(rel)
		if !ok {
			bad = append(bad, fmt.Sprintf("%s: in no layer; add it to layerOf", rel))
			continue
		}
		check := func(imports []string, test bool) {
			for _, imp := range imports {
				if dep, ok := strings.CutPrefix(imp, mod+"/"); ok {
					to, known := layerOf(dep)
					_, allowed := allowedUpward[[2]string{rel, dep}]
					if _, ok := allowedUpwardInTests[[2]string{rel, dep}]; ok && test {
						allowed = true
					}
					if !known || to > from && !allowed {
						bad = append(bad, fmt.Sprintf("%s (%s) imports %s (%s): upward", rel, layerNames[from], dep, layerName(dep)))
					}
					continue
				}
				for module, layers := range restrictedModules {
					if (imp == module || strings.HasPrefix(imp, module+"/")) && !test && !slices.Contains(layers, from) {
						bad = append(bad, fmt.Sprintf("%s (%s) imports %s: not in this layer's library code", rel, layerNames[from], imp))
					}
				}
			}
		}
		check(p.Imports, false)
		check(p.TestImports, true)
		check(p.XTestImports, true)
	}
	slices.Sort(bad)
	return slices.Compact(bad)
}

func layerName(rel string) string {
	if l, ok := layerOf(rel); ok {
		return layerNames[l]
	}
	return "no layer"
}

// TestImportsPointDown fails when a package of this module imports one
// in a layer above its own (its tests' imports included), or uses a
// restricted module outside the layers allowed to.
func TestImportsPointDown(t *testing.T) {
	RequireGo(t)
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Imports,TestImports,XTestImports,Error", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	modCmd := exec.Command("go", "list", "-m")
	modCmd.Dir = root
	mod, err := modCmd.Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	var pkgs []listedPackage
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		if p.Error != nil {
			t.Fatalf("go list %s: %s", p.ImportPath, p.Error.Err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages under %s; is this the module root?", len(pkgs), root)
	}
	for _, v := range layerViolations(strings.TrimSpace(string(mod)), pkgs) {
		t.Error(v)
	}
}

// The check itself: each kind of wrong edge is caught, the right ones
// pass.
func TestLayerViolations(t *testing.T) {
	const mod = "example.com/m"
	pkg := func(path string, imports ...string) listedPackage {
		p := listedPackage{ImportPath: mod + "/" + path}
		for _, imp := range imports {
			if strings.Contains(imp, ".") {
				p.Imports = append(p.Imports, imp)
			} else {
				p.Imports = append(p.Imports, mod+"/"+imp)
			}
		}
		return p
	}
	for _, ok := range []listedPackage{
		pkg("internal/sys", "golang.org/x/sys/unix"),
		pkg("rtapi/msg", "rtapi/ipc", "internal/sys", "go.uber.org/zap"),
		pkg("flavors", "kerneldetect", "rtapi/hist"),
		pkg("rtapi", "flavors", "kerneldetect", "rtapi/shm"),
		pkg("internal/backend", "kerneldetect", "rtapi/hist", "internal/sys"),
		pkg("flavors", "internal/backend"),
		pkg("rtapi/sim", "rtapi", "internal/backend"),
		pkg("rtapi/promrt", "rtapi", "rtapi/hal", "github.com/prometheus/client_golang/prometheus"),
		pkg("examples/halhost", "rtapi/hal", "rtapi/promrt", "examples/internal/latency"),
		{ImportPath: mod + "/rtapi/shm", TestImports: []string{"github.com/stretchr/testify/require", mod + "/internal/rttest"}},
		{ImportPath: mod + "/rtapi", XTestImports: []string{mod + "/rtapi/sim"}}, // allowedUpwardInTests
	} {
		if v := layerViolations(mod, []listedPackage{ok}); len(v) > 0 {
			t.Errorf("%s: %v", ok.ImportPath, v)
		}
	}
	for _, bad := range []listedPackage{
		pkg("internal/latency", "rtapi"),
		pkg("internal/sys", "kerneldetect"),
		pkg("internal/sys", "rtapi/shm"),
		pkg("rtapi/ipc", "flavors"),
		pkg("rtapi/shm", "rtapi"),
		pkg("kerneldetect", "flavors"),
		pkg("flavors", "rtapi"),
		pkg("internal/backend", "rtapi"),
		pkg("internal/backend/x", "rtapi/sim"),
		pkg("rtapi", "rtapi/hal"),
		pkg("rtapi/hal", "examples/internal/axis"),
		pkg("rtapi", "tools/x"),
		pkg("tools/x"),
		pkg("flavors", "github.com/prometheus/client_golang/prometheus"),
		pkg("rtapi/hal", "github.com/stretchr/testify/require"),
		{ImportPath: mod + "/rtapi/shm", XTestImports: []string{mod + "/rtapi"}},
		pkg("rtapi", "rtapi/sim"), // the library itself never imports the sim
		{ImportPath: "other.org/x"},
	} {
		if v := layerViolations(mod, []listedPackage{bad}); len(v) != 1 {
			t.Errorf("%s %v %v: %d violations %v, want 1", bad.ImportPath, bad.Imports, bad.XTestImports, len(v), v)
		}
	}
}

// TestOneChildProtocol fails when a test starts a copy of its binary
// without Child, with an environment variable of its own again.
func TestOneChildProtocol(t *testing.T) {
	RequireGo(t)
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	self := filepath.Join(root, "internal", "rttest")
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || path == self) {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, reexec := range []string{"exec.Command(os.Args[0]", "os.Executable()"} {
			if bytes.Contains(src, []byte(reexec)) {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s: %s: re-run the test binary with rttest.Child or rttest.ChildAs", rel, reexec)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
