package act

import (
	"reflect"
	"strings"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/internal/yamlerr"
)

// campaignKeys are the keys a campaign file may use at the top level or,
// nested, inside params, state and conditions, for "did you mean"
// suggestions.
func campaignKeys(nested bool) []string {
	var keys []string
	types := []any{campaignFile{}}
	if nested {
		types = []any{Range{}, corpus.ConditionSpec{}, symbolicFile{}}
	}
	for _, v := range types {
		t := reflect.TypeOf(v)
		for i := range t.NumField() {
			if k, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); k != "" {
				keys = append(keys, k)
			}
		}
	}
	if nested {
		keys = append(keys, "values")
	}
	return keys
}

// yamlError rewrites a YAML decoding error of a campaign file so that each
// problem names the file, the line and the field (internal/yamlerr).
func yamlError(path string, src []byte, err error) error {
	return yamlerr.Rewrite(path, src, err, campaignKeys)
}
