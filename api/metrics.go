package api

import (
	"strconv"

	"github.com/fasthttp/router"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"
)

// Metrics gives the API the registry its series join.
type Metrics interface {
	Metrics() *prometheus.Registry
}

// requestMetrics counts requests by route pattern and status.
type requestMetrics struct {
	requests *prometheus.CounterVec
	handler  fasthttp.RequestHandler
}

func newRequestMetrics(reg *prometheus.Registry) *requestMetrics {
	m := &requestMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "earshot_http_requests_total", Help: "HTTP requests by method, route pattern and status.",
		}, []string{"method", "route", "status"}),
	}
	reg.MustRegister(m.requests)
	m.handler = fasthttpadaptor.NewFastHTTPHandler(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	return m
}

func (m *requestMetrics) observe(ctx *fasthttp.RequestCtx) {
	route, _ := ctx.UserValue(router.MatchedRoutePathParam).(string)
	if route == "" {
		route = "unmatched"
	}
	m.requests.WithLabelValues(string(ctx.Method()), route, strconv.Itoa(ctx.Response.StatusCode())).Inc()
}
