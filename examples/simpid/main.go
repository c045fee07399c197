package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/gortapi/gortapi/examples/internal/cli"
	"github.com/gortapi/gortapi/rtapi"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("simpid", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cli.Usage(fs, "[-seconds S] [-seed N] [-jitter D] [-stddev D] [-rtapi.FLAG ...]", "")
	opts := rtapi.RegisterFlags(fs)
	cfg := Config{}
	fs.Float64Var(&cfg.Seconds, "seconds", 10, "how long to run, in (virtual) seconds")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "fault-injection seed of the sim flavor")
	fs.DurationVar(&cfg.Jitter, "jitter", 30*time.Microsecond, "mean wake-up lateness injected on sim")
	fs.DurationVar(&cfg.StdDev, "stddev", 15*time.Microsecond, "standard deviation of the injected lateness")
	if err := cli.Parse(fs, args); err != nil {
		return cli.Exit("simpid", stderr, err)
	}
	if cfg.Seconds <= 0 {
		return cli.Exit("simpid", stderr, cli.Usagef("-seconds %v: want a positive number", cfg.Seconds))
	}
	if opts.Flavor == "" && os.Getenv("RTAPI_FLAVOR") == "" {
		opts.Flavor = "sim"
	}
	cfg.Options = *opts
	start := time.Now()
	res, err := Run(cfg)
	if err != nil {
		return cli.Exit("simpid", stderr, err)
	}
	st := res.Stats
	fmt.Fprintf(stdout, "following error: max %.2f µm, rms %.2f µm over %d cycles (%.1f s) in %v real time\n",
		res.MaxError*1e6, res.RMSError*1e6, res.Cycles, cfg.Seconds, time.Since(start).Round(time.Millisecond))
	fmt.Fprintf(stdout, "servo latency: min %v mean %v max %v; exec max %v; overruns %d\n",
		time.Duration(st.Latency.Min), st.Latency.Mean(), time.Duration(st.Latency.Max),
		time.Duration(st.Exec.Max), st.Overruns)
	if res.Digest != 0 {
		fmt.Fprintf(stdout, "trace digest %016x, error hash %016x\n", res.Digest, res.ErrorsHash)
	}
	return 0
}
