package main

import (
	"bytes"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/gortapi/gortapi/internal/reexec"
	"github.com/gortapi/gortapi/internal/rttest"
)

func TestMain(m *testing.M) {
	if reexec.Role() == childRole { // measure's children in this package's tests
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(rttest.Main(m))
}

// A measuring child that does not end childGrace after its run is sent
// SIGQUIT: its goroutines' stacks reach standard error (a CI log), not
// only "signal: killed", and the error says it hung.
func TestMeasureDumpsAHungChild(t *testing.T) {
	rttest.RequireSelfExec(t)
	grace, out := childGrace, hungOutput
	t.Cleanup(func() { childGrace, hungOutput = grace, out })
	var dump bytes.Buffer
	childGrace, hungOutput = 200*time.Millisecond, &dump
	// a load child runs until it is told to stop: here, never
	_, err := measure(0, `{"kind":"load"}`)
	if !errors.Is(err, errChildHung) {
		t.Fatalf("measure: %v, want errChildHung", err)
	}
	for _, want := range []string{"did not end within 200ms", "SIGQUIT", "goroutine ", "os/signal"} {
		if !bytes.Contains(dump.Bytes(), []byte(want)) {
			t.Errorf("the hung child's output lacks %q:\n%s", want, dump.String())
		}
	}
}
