package store

import "github.com/earshot-dev/earshot/internal/jsonobject"

// Metadata is a free-form JSON object kept on a job (custom_metadata,
// post_session_metadata): numbers are json.Number, decoded as the request
// decoder (params) decodes them, so what the API accepted reads back equal.
type Metadata = jsonobject.Object
