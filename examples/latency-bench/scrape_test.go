package main

import (
	"math"
	"runtime/metrics"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The scrape group is selectable and compares the flood with no flood.
func TestScrapeGroupListed(t *testing.T) {
	assert.True(t, slices.Contains(groupIDs(), "scrape"))
	g := scrapeGroup(&bench{s: &settings{}})
	assert.Equal(t, []ratioSpec{
		{"64 scrapers / none", rowScrapeFlood, rowScrapeNone},
		{"64 scrapers, bare server / none", rowScrapeBare, rowScrapeNone},
	}, g.ratios)
}

// The window's runtime histograms are read as differences.
func TestRuntimeHistogramDelta(t *testing.T) {
	buckets := []float64{0, 1e-6, 1e-3, 1e-2, math.Inf(1)}
	before := &metrics.Float64Histogram{Counts: []uint64{5, 0, 0, 0}, Buckets: buckets}
	after := &metrics.Float64Histogram{Counts: []uint64{95, 0, 4, 1}, Buckets: buckets}
	assert.Equal(t, "1µs", histQuantile(after, before, 0.5))
	assert.Equal(t, "10ms", histQuantile(after, before, 1), "the last bucket's lower bound")
	assert.Equal(t, uint64(5), histAbove(after, before, 1e-3))
	assert.Equal(t, "-", histQuantile(before, before, 1), "nothing in the window")
	assert.Equal(t, "-", histQuantile(nil, before, 1))
}
