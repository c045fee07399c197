package promrt_test

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/promrt"
	"github.com/gortapi/gortapi/rtapi/sim"
)

// A task's statistics as Prometheus metrics. The task runs on the sim
// flavor here, so that the figures are the same on every machine; a host
// serves the registry with promhttp.HandlerFor.
func Example() {
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rt.Close()
	servo, err := rt.NewPeriodicTask(rtapi.TaskSpec{Name: "servo", Period: time.Millisecond}, func(*rtapi.Cycle) {})
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = servo.Start()
	clock, _ := sim.New(rt)
	_ = clock.Advance(5 * time.Millisecond)

	reg := prometheus.NewRegistry()
	reg.MustRegister(promrt.NewCollector(servo))
	families, err := reg.Gather() // what a scrape of /metrics serves
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range families {
		switch f.GetName() {
		case "gortapi_task_cycles_total", "gortapi_task_overruns_total":
			m := f.GetMetric()[0]
			fmt.Printf("%s{task=%q} %g\n", f.GetName(), m.GetLabel()[0].GetValue(), m.GetCounter().GetValue())
		}
	}
	// Output:
	// gortapi_task_cycles_total{task="servo"} 5
	// gortapi_task_overruns_total{task="servo"} 0
}
