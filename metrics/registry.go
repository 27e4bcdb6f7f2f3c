package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/earshot-dev/earshot/store"
)

// Store is what the gauges read of the store at each scrape.
type Store interface {
	CountJobs(kind store.Kind, status store.Status) (int, error)
	PendingDeliveries() (int, error)
	PendingBatchPasses() (int, error)
}

// Sessions counts the live sessions open (daemon/live.Service).
type Sessions interface {
	Sessions() int
}

// Decoders reports the embedded engine's decoder pools
// (pipeline.Transcriber): EachPool calls fn with each loaded pool's name
// and decoders, Loading counts the decoders of all pools still loading in
// the background after start.
type Decoders interface {
	EachPool(fn func(pool string, total, busy int))
	Loading() int
}

// Sources are what the state gauges read at each scrape.
type Sources struct {
	Store    Store
	Live     Sessions
	Decoders Decoders
}

// NewRegistry returns a registry holding the Go runtime and process
// collectors and the state gauges read from src. A gauge whose read fails
// is left out of that scrape.
func NewRegistry(src Sources) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(state{src}, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// state reads gauges from the appliance's state at scrape time.
type state struct{ src Sources }

var (
	descJobs     = prometheus.NewDesc("earshot_jobs", "Jobs in the store by kind and status.", []string{"kind", "status"}, nil)
	descQueue    = prometheus.NewDesc("earshot_queue_depth", "Pre-recorded jobs waiting for a worker.", nil, nil)
	descLive     = prometheus.NewDesc("earshot_live_sessions", "Live sessions open (created and not ended).", nil, nil)
	descDecoders = prometheus.NewDesc("earshot_decoders", "Decoders of the embedded engine's pools (wideband, live, telephone, telephone_batch), by pool and state.", []string{"pool", "state"}, nil)
	descLoading  = prometheus.NewDesc("earshot_decoders_loading", "Decoders of the embedded pools (wideband batch and live, telephone live and batch) and lean searches of the telephone live pool still loading in the background after start.", nil, nil)
	descOutbox   = prometheus.NewDesc("earshot_callback_outbox_depth", "Callbacks waiting for delivery.", nil, nil)
	descBatch    = prometheus.NewDesc("earshot_batch_passes_pending", "Ended live sessions whose batch pass is queued or running.", nil, nil)
)

func (c state) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descJobs, descQueue, descLive, descDecoders, descLoading, descOutbox, descBatch} {
		ch <- d
	}
}

func (c state) Collect(ch chan<- prometheus.Metric) {
	db := c.src.Store
	for _, k := range []store.Kind{store.KindPreRecorded, store.KindLive} {
		for _, s := range []store.Status{store.StatusQueued, store.StatusProcessing, store.StatusDone, store.StatusError} {
			if n, err := db.CountJobs(k, s); err == nil {
				ch <- prometheus.MustNewConstMetric(descJobs, prometheus.GaugeValue, float64(n), string(k), string(s))
				if k == store.KindPreRecorded && s == store.StatusQueued {
					ch <- prometheus.MustNewConstMetric(descQueue, prometheus.GaugeValue, float64(n))
				}
			}
		}
	}
	ch <- prometheus.MustNewConstMetric(descLive, prometheus.GaugeValue, float64(c.src.Live.Sessions()))
	c.src.Decoders.EachPool(func(pool string, total, busy int) {
		ch <- prometheus.MustNewConstMetric(descDecoders, prometheus.GaugeValue, float64(busy), pool, "busy")
		ch <- prometheus.MustNewConstMetric(descDecoders, prometheus.GaugeValue, float64(total-busy), pool, "idle")
	})
	ch <- prometheus.MustNewConstMetric(descLoading, prometheus.GaugeValue, float64(c.src.Decoders.Loading()))
	if n, err := db.PendingDeliveries(); err == nil {
		ch <- prometheus.MustNewConstMetric(descOutbox, prometheus.GaugeValue, float64(n))
	}
	if n, err := db.PendingBatchPasses(); err == nil {
		ch <- prometheus.MustNewConstMetric(descBatch, prometheus.GaugeValue, float64(n))
	}
}
