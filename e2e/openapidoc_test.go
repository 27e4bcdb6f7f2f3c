package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// openAPIFile is the document the daemon embeds and serves.
const openAPIFile = "../api/openapi.json"

// apiDoc is api/openapi.json compiled for checking real answers: every
// object schema that lists properties gets additionalProperties false
// (unless it says otherwise), so a field the daemon sends and the document
// does not name fails, as does a required field that is missing.
type apiDoc struct {
	doc map[string]any
	c   *jsonschema.Compiler
}

const docURL = "https://earshot.invalid/openapi.json"

func loadAPIDoc(t *testing.T, raw []byte) *apiDoc {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("%s: %v", openAPIFile, err)
	}
	doc, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s: not a JSON object", openAPIFile)
	}
	closeObjects(doc["components"])
	closeObjects(doc["paths"])
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(docURL, doc); err != nil {
		t.Fatal(err)
	}
	return &apiDoc{doc: doc, c: c}
}

// closeObjects sets additionalProperties false on every schema under v that
// has properties and no additionalProperties of its own.
func closeObjects(v any) {
	switch v := v.(type) {
	case map[string]any:
		if props, ok := v["properties"].(map[string]any); ok {
			if _, set := v["additionalProperties"]; !set {
				v["additionalProperties"] = false
			}
			for _, p := range props {
				closeObjects(p)
			}
		}
		for k, e := range v {
			if k != "properties" {
				closeObjects(e)
			}
		}
	case []any:
		for _, e := range v {
			closeObjects(e)
		}
	}
}

// response is the documented response of route (e.g. "GET
// /v2/pre-recorded/{id}") for status, and its JSON pointer.
func (a *apiDoc) response(route string, status int) (map[string]any, string, error) {
	method, path, _ := strings.Cut(route, " ")
	ptr := "/paths/" + escapePtr(path) + "/" + strings.ToLower(method)
	op, ok := a.at(ptr).(map[string]any)
	if !ok {
		return nil, "", fmt.Errorf("%s is not in %s", route, openAPIFile)
	}
	responses, _ := op["responses"].(map[string]any)
	key := fmt.Sprint(status)
	r, ok := responses[key].(map[string]any)
	if !ok {
		return nil, "", fmt.Errorf("%s: status %d is not documented in %s", route, status, openAPIFile)
	}
	ptr += "/responses/" + key
	if ref, ok := r["$ref"].(string); ok {
		ptr = strings.TrimPrefix(ref, "#")
		r, _ = a.at(ptr).(map[string]any)
	}
	return r, ptr, nil
}

func escapePtr(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func (a *apiDoc) at(ptr string) any {
	var v any = a.doc
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")]
	}
	return v
}

// check fails t unless the answer (status, Content-Type, body) of route is
// what the document says: a documented status; for a JSON body, a body
// valid against its schema (the message names the route, the status and
// the field's path in the body); for no content, no body.
func (a *apiDoc) check(t *testing.T, route string, status int, ctype string, body []byte) {
	t.Helper()
	r, ptr, err := a.response(route, status)
	if err != nil {
		t.Errorf("%v (body %.200s)", err, body)
		return
	}
	content, _ := r["content"].(map[string]any)
	if len(content) == 0 {
		if len(body) != 0 {
			t.Errorf("%s %d: documented without a body, got %.200q", route, status, body)
		}
		return
	}
	mt, _, _ := mime.ParseMediaType(ctype)
	media, ok := content[mt].(map[string]any)
	if !ok {
		media, ok = content["*/*"].(map[string]any)
	}
	if !ok {
		t.Errorf("%s %d: Content-Type %q is not documented (%s)", route, status, ctype, ptr)
		return
	}
	if mt != "application/json" {
		return
	}
	if _, ok := media["schema"]; !ok {
		t.Errorf("%s %d: no schema documented", route, status)
		return
	}
	loc := docURL + "#" + ptr + "/content/application~1json/schema"
	sch, err := a.c.Compile(loc)
	if err != nil {
		t.Fatalf("compile %s: %v", loc, err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Errorf("%s %d: body is not JSON: %.200q", route, status, body)
		return
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("%s %d: the answer does not match api/openapi.json (%s): a field at the path below is undocumented, missing or of another type; update the document or the daemon:\n%v\nbody: %.2000s",
			route, status, ptr, err, body)
	}
}

// checkMessage fails t unless raw, a server message of the live
// WebSocket (where says which), matches the schema LiveMessage_<type> of
// the document.
func (a *apiDoc) checkMessage(t *testing.T, where string, raw []byte) {
	t.Helper()
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		t.Errorf("%s: message %.200q is not a JSON object", where, raw)
		return
	}
	name := "LiveMessage_" + head.Type
	if a.at("/components/schemas/"+name) == nil {
		t.Errorf("%s: message type %q is not documented (add components.schemas.%s to %s): %.300s", where, head.Type, name, openAPIFile, raw)
		return
	}
	sch, err := a.c.Compile(docURL + "#/components/schemas/" + name)
	if err != nil {
		t.Fatalf("compile %s: %v", name, err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("%s: %s message does not match %s in %s: a field at the path below is undocumented, missing or of another type:\n%v\nmessage: %.1000s",
			where, head.Type, name, openAPIFile, err, raw)
	}
}

// checkRequest fails t unless body, a JSON request the daemon accepted,
// is valid against the documented request schema of route.
func (a *apiDoc) checkRequest(t *testing.T, route string, body []byte) {
	t.Helper()
	method, path, _ := strings.Cut(route, " ")
	ptr := "/paths/" + escapePtr(path) + "/" + strings.ToLower(method) + "/requestBody/content/application~1json/schema"
	if a.at(ptr) == nil {
		t.Errorf("%s accepted a JSON body, but no JSON request body is documented", route)
		return
	}
	sch, err := a.c.Compile(docURL + "#" + ptr)
	if err != nil {
		t.Fatalf("compile %s: %v", ptr, err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("%s: request body is not JSON: %v", route, err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("%s: the daemon accepted a request the document's request schema refuses (%s):\n%v\nrequest: %.1000s", route, ptr, err, body)
	}
}

// call sends a request (key "" sends none) and checks its answer against
// the document; it returns the status and the body.
func (a *apiDoc) call(t *testing.T, d *daemonProc, route, path, key string, body io.Reader, ctype string, hdr ...string) (int, []byte) {
	t.Helper()
	method, _, _ := strings.Cut(route, " ")
	var sent []byte
	if body != nil {
		var err error
		if sent, err = io.ReadAll(body); err != nil {
			t.Fatal(err)
		}
		body = bytes.NewReader(sent)
	}
	req, err := http.NewRequest(method, d.Base+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("x-service-key", key)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	c := http.Client{Timeout: 60 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	a.check(t, route, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	if resp.StatusCode < 300 && ctype == "application/json" {
		a.checkRequest(t, route, sent)
	}
	return resp.StatusCode, b
}

func jsonBody(v any) io.Reader {
	b, _ := json.Marshal(v)
	return bytes.NewReader(b)
}

// validateOpenAPI checks doc as an OpenAPI 3.1 document with
// @seriousme/openapi-schema-validator (installed by `make test-deps` in
// bin/e2e-node, like playwright-core; $EARSHOT_NODE_MODULES overrides).
func validateOpenAPI(t *testing.T, doc []byte) {
	t.Helper()
	modules := os.Getenv("EARSHOT_NODE_MODULES")
	if modules == "" {
		modules, _ = filepath.Abs("../bin/e2e-node/node_modules")
	}
	cli := filepath.Join(modules, "@seriousme/openapi-schema-validator/bin/validate-api-cli.js")
	if _, err := os.Stat(cli); err != nil {
		t.Skipf("needs @seriousme/openapi-schema-validator in %s (make test-deps)", modules)
	}
	f := filepath.Join(t.TempDir(), "openapi.json")
	if err := os.WriteFile(f, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("node", cli, f).CombinedOutput()
	var res struct {
		Valid bool `json:"valid"`
	}
	if err != nil || json.Unmarshal(out, &res) != nil || !res.Valid {
		t.Fatalf("GET /v2/openapi.json is not a valid OpenAPI document: %v\n%s", err, out)
	}
	var head struct {
		OpenAPI string `json:"openapi"`
	}
	if json.Unmarshal(doc, &head) != nil || !strings.HasPrefix(head.OpenAPI, "3.1.") {
		t.Fatalf("document says openapi %q, want 3.1.x", head.OpenAPI)
	}
}
