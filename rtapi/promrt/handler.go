package promrt

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Limits of Handler.
const (
	// MaxScrapesInFlight is how many scrapes Handler serves at once;
	// more get 503 at once.
	MaxScrapesInFlight = 1
	// ScrapeTimeout bounds one scrape: past it the scraper gets 503
	// (gathering finishes in the background).
	ScrapeTimeout = 10 * time.Second
)

// Handler returns the /metrics handler for reg that a real-time host
// should serve: promhttp.HandlerFor with MaxScrapesInFlight and
// ScrapeTimeout, so any number of scrapers costs what one does, and
// gathering errors served as far as possible (promhttp.ContinueOnError).
func Handler(reg prometheus.Gatherer) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		MaxRequestsInFlight: MaxScrapesInFlight,
		Timeout:             ScrapeTimeout,
		ErrorHandling:       promhttp.ContinueOnError,
	})
}
