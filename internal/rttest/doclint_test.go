package rttest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// rtSafeWord matches every spelling of the term: RT-safe, rt safe, RTsafe.
var rtSafeWord = regexp.MustCompile(`(?i)\brt[- ]?safe`)

// rtSafeOK reports whether a doc comment's text uses the one phrase for
// real-time safety: either it does not mention it, or it mentions it once,
// as its last line, "RT-safe." (rtapi's package doc defines the phrase).
func rtSafeOK(text string) bool {
	n := len(rtSafeWord.FindAllStringIndex(text, -1))
	if n == 0 {
		return true
	}
	lines := strings.Split(strings.TrimSpace(text), "\n")
	return n == 1 && strings.TrimSpace(lines[len(lines)-1]) == "RT-safe."
}

func TestRTSafeRule(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]bool{
		"Now returns the time.\n":                            true,
		"Now returns the time.\nRT-safe.\n":                  true,
		"Now returns the time.\n\nRT-safe.\n":                true,
		"Now returns the time. RT-safe.\n":                   false,
		"Now returns the time.\nRT-safe: no allocation.\n":   false,
		"Now returns the time.\nIt is RT-safe.\n":            false,
		"RT-safe.\nNow returns the time.\n":                  false,
		"Now is not RT-safe.\n":                              false,
		"Now is rt safe.\n":                                  false,
		"Now returns the time (RT-safe).\nRT-safe.\n":        false,
		"Read is RT-safe; Wait blocks.\n":                    false,
		"Read reads a record.\nRT-safe: consumer side.\n":    false,
		"Read reads a record; consumer side only.\nRT-safe.": true,
	} {
		if got := rtSafeOK(text); got != want {
			t.Errorf("rtSafeOK(%q) = %v, want %v", text, got, want)
		}
	}
}

// TestOneRTSafePhrase fails when the doc comment of a declaration (a
// function, method, type, field, constant or variable) mentions real-time
// safety other than as its last line "RT-safe.". Package docs may discuss
// the term; rtapi's defines it.
func TestOneRTSafePhrase(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root: %v", err)
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == "internal/rttest/doclint_test.go" {
			return nil // this file spells the wrong forms on purpose
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		check := func(cg *ast.CommentGroup) {
			if cg != nil && !rtSafeOK(cg.Text()) {
				t.Errorf("%s:%d: a doc comment mentions RT-safety other than as its last line \"RT-safe.\"", rel, fset.Position(cg.Pos()).Line)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				check(n.Doc)
			case *ast.GenDecl:
				check(n.Doc)
			case *ast.TypeSpec:
				check(n.Doc)
				check(n.Comment)
			case *ast.ValueSpec:
				check(n.Doc)
				check(n.Comment)
			case *ast.Field:
				check(n.Doc)
				check(n.Comment)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
