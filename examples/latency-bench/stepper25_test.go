package main

import (
	"strconv"
	"testing"
	"time"

	"github.com/gortapi/gortapi/internal/rttest"
)

// The stepper25 child runs both threads and the stepper chain moves: the
// stepgens step and the encoders count them; the empty chain's child
// runs its threads too.
func TestChildStepper25(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two HAL hosts for a second each; skipped with -short")
	}
	rttest.RequireRT(t)
	r := childResultOf(t, stepperSpec(false, time.Second))
	if len(r.Tasks) != 2 {
		t.Fatalf("tasks %+v", r.Tasks)
	}
	for _, task := range r.Tasks {
		if task.Cycles == 0 {
			t.Errorf("stepper host, %s thread ran no cycle", task.Name)
		}
	}
	if r.Tasks[0].Name != "base" || r.Tasks[0].Period != 25*time.Microsecond {
		t.Errorf("base thread %s, period %v", r.Tasks[0].Name, r.Tasks[0].Period)
	}
	for _, pin := range stepperPins[:6] {
		v, err := strconv.ParseFloat(r.Pins[pin], 64)
		if err != nil || v <= 0 {
			t.Errorf("%s = %q after a second, want counts > 0 (%v)", pin, r.Pins[pin], err)
		}
	}

	e := childResultOf(t, stepperSpec(true, time.Second))
	if len(e.Tasks) != 2 || e.Tasks[0].Cycles == 0 || e.Tasks[1].Cycles == 0 || len(e.Pins) != 0 {
		t.Fatalf("empty host %+v, pins %v", e.Tasks, e.Pins)
	}
}

// The goals compare the base thread's ratios with 1.1 and its median
// missed releases with the empty chain's.
func TestStepper25Goals(t *testing.T) {
	t.Parallel()
	row := func(name string, missed ...int64) rowResult {
		r := rowResult{Name: name}
		for i, m := range missed {
			r.Runs = append(r.Runs, runResult{Round: i + 1, Overruns: m})
		}
		r.Median.Count = 1000
		return r
	}
	g := groupResult{ID: "stepper25",
		Rows:   []rowResult{row(rowStepper+" · base", 0, 9, 1), row(rowStepperEmpty+" · base", 1, 0, 2)},
		Ratios: []ratioResult{{Label: "stepper / empty · base", P999: 1.05, Max: 1.3}}}
	goals := stepper25Goals(results{Groups: []groupResult{g}})
	if len(goals) != 3 {
		t.Fatalf("goals %+v", goals)
	}
	if !goals[0].Met || goals[0].Measured != 1.05 || goals[1].Met || goals[1].Measured != 1.3 {
		t.Errorf("ratio goals %+v", goals[:2])
	}
	if m := goals[2]; !m.Met || m.Measured != 1 || m.Limit != 1 {
		t.Errorf("missed releases goal %+v (medians 1 and 1)", m)
	}
	if stepper25Goals(results{}) != nil {
		t.Error("goals without the group")
	}
}
