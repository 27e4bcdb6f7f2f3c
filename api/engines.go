package api

import (
	"fmt"
	"slices"

	"github.com/valyala/fasthttp"

	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/transcript"
)

// EngineLister is the part of the service GET /v2/engines reads.
type EngineLister interface {
	// Engines lists the installed recognition engines.
	Engines() []transcript.EngineInfo
}

// enginesResponse is the body of GET /v2/engines (outside SPEC.md,
// documented in README.md).
type enginesResponse struct {
	Engines   []transcript.EngineInfo `json:"engines"`
	Languages []string                `json:"languages"`
}

// listEngines answers GET /v2/engines: every installed engine with its
// languages, capacity and routes, and the union of their languages.
func (s *Server) listEngines(ctx *fasthttp.RequestCtx) {
	l, ok := s.svc.(EngineLister)
	if !ok {
		s.fail(ctx, fmt.Errorf("route %s: %w", ctx.Path(), store.ErrNotFound))
		return
	}
	resp := enginesResponse{Engines: l.Engines(), Languages: []string{}}
	for _, e := range resp.Engines {
		for _, lang := range e.Languages {
			if !slices.Contains(resp.Languages, lang) {
				resp.Languages = append(resp.Languages, lang)
			}
		}
	}
	s.writeJSON(ctx, fasthttp.StatusOK, resp)
}
