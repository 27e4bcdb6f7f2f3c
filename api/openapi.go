package api

import (
	_ "embed"

	"github.com/valyala/fasthttp"
)

// OpenAPI is the OpenAPI 3.1 document of this API (api/openapi.json): every
// /v2, /admin and operations endpoint with its request and response
// schemas and error statuses. e2e/openapi_test.go checks the daemon's real
// answers against it; `make test` validates it as OpenAPI 3.1.
//
//go:embed openapi.json
var OpenAPI []byte

// openAPI is GET /v2/openapi.json. It needs no key: it describes the API,
// holds no account data, and tools read it before they have a key.
func (s *Server) openAPI(ctx *fasthttp.RequestCtx) {
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetContentType("application/json")
	ctx.SetBody(OpenAPI)
}
