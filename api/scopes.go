package api

import (
	"fmt"
	"strings"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/store"
)

// routeScopes is the one table of the scopes each keyed route needs
// (store.Scope; POST /admin/keys grants them), by method and route as
// registered in New. A key must hold every scope its route lists; an empty
// list is any valid key's. A keyed route missing here is refused to every
// key (TestRouteScopes finds it first).
var routeScopes = map[string][]store.Scope{
	"GET /v2/engines": nil,

	"GET /v2/pre-recorded":      {store.ScopeJobsRead},
	"GET /v2/pre-recorded/{id}": {store.ScopeJobsRead},
	"GET /v2/live":              {store.ScopeJobsRead},
	"GET /v2/live/{id}":         {store.ScopeJobsRead},

	"POST /v2/pre-recorded":          {store.ScopeJobsWrite},
	"DELETE /v2/pre-recorded/{id}":   {store.ScopeJobsWrite},
	"DELETE /v2/transcription/{id}":  {store.ScopeJobsWrite},
	"DELETE /v2/live/{id}":           {store.ScopeJobsWrite},
	"POST /v2/upload":                {store.ScopeJobsWrite},
	"DELETE /v2/files/{id}":          {store.ScopeJobsWrite},
	"GET /v2/pre-recorded/{id}/file": {store.ScopeAudioRead},
	"GET /v2/live/{id}/file":         {store.ScopeAudioRead},
	"GET /v2/files/{id}":             {store.ScopeAudioRead},

	"POST /v2/live":             {store.ScopeLive},
	"POST /v2/live/{id}/pause":  {store.ScopeLive},
	"POST /v2/live/{id}/resume": {store.ScopeLive},

	// The /v1 door creates a job and answers its transcript.
	"POST /v1/audio/transcriptions": {store.ScopeJobsWrite, store.ScopeJobsRead},
	"POST /v1/audio/translations":   {store.ScopeJobsWrite, store.ScopeJobsRead},
	"GET /v1/models":                nil,
	"GET /v1/models/{model}":        nil,

	"POST /admin/keys":        {store.ScopeAdmin},
	"GET /admin/keys":         {store.ScopeAdmin},
	"DELETE /admin/keys/{id}": {store.ScopeAdmin},
	"GET /admin/nodes":        {store.ScopeAdmin},
	"GET /admin/audit":        {store.ScopeAdmin},

	// A legal hold is an admin's act on any account's job.
	"GET /v2/pre-recorded/{id}/hold":    {store.ScopeAdmin},
	"POST /v2/pre-recorded/{id}/hold":   {store.ScopeAdmin},
	"DELETE /v2/pre-recorded/{id}/hold": {store.ScopeAdmin},
	"GET /v2/live/{id}/hold":            {store.ScopeAdmin},
	"POST /v2/live/{id}/hold":           {store.ScopeAdmin},
	"DELETE /v2/live/{id}/hold":         {store.ScopeAdmin},
}

// needScopes refuses a request whose key lacks a scope its route needs
// (routeScopes): a 403 naming the scope. It runs in authenticate, once the
// key is known.
func needScopes(ctx *fasthttp.RequestCtx, k store.Key) error {
	route, _ := ctx.UserValue(router.MatchedRoutePathParam).(string)
	need, ok := routeScopes[string(ctx.Method())+" "+route]
	if !ok {
		return &errcode.Error{Kind: errcode.ErrScope, Msg: "no API key may call this route"}
	}
	var missing []string
	for _, s := range need {
		if !k.Allows(s) {
			missing = append(missing, string(s))
		}
	}
	if missing == nil {
		return nil
	}
	return &errcode.Error{Kind: errcode.ErrScope,
		Msg:   fmt.Sprintf("API key lacks scope %s", strings.Join(missing, ", ")),
		Cause: fmt.Errorf("key %s of account %s", k.ID, k.Account)}
}
