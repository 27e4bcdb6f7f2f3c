package api

import (
	"embed"
	"io/fs"
	"path"

	"github.com/valyala/fasthttp"

	"github.com/earshot-dev/earshot/store"
)

// consoleFiles is the operator console: a plain HTML/CSS/JS page that
// speaks the public API from the browser (the API key stays in the tab's
// sessionStorage).
//
//go:embed console
var consoleFiles embed.FS

// consoleTypes are the content types of the console's files.
var consoleTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".svg":  "image/svg+xml",
	".ico":  "image/x-icon",
}

// consoleCSP keeps the page to its own scripts and styles; audio plays
// from blob: URLs of fetched recordings.
const consoleCSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"media-src 'self' blob:; connect-src 'self' ws: wss:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

// console is GET /console (the page) and GET /console/{file}.
func (s *Server) console(ctx *fasthttp.RequestCtx) {
	name, _ := ctx.UserValue("file").(string)
	if name == "" {
		name = "index.html"
	}
	ctype, ok := consoleTypes[path.Ext(name)]
	var b []byte
	var err error
	if ok && fs.ValidPath(name) {
		b, err = fs.ReadFile(consoleFiles, "console/"+name)
	}
	if !ok || b == nil || err != nil {
		s.fail(ctx, store.ErrNotFound)
		return
	}
	h := &ctx.Response.Header
	h.Set("Content-Security-Policy", consoleCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Permissions-Policy", "microphone=(self)")
	h.Set("Cache-Control", "no-cache")
	ctx.SetContentType(ctype)
	ctx.SetBody(b)
}
