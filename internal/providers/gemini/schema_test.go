package gemini

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func TestCleanSchema(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"keywords Gemini rejects are dropped, at every depth",
			`{"$schema":"http://json-schema.org/draft-07/schema#","$id":"x","title":"T","type":"object","additionalProperties":false,"properties":{"a":{"type":"object","additionalProperties":{"type":"string"},"properties":{"b":{"type":"string","examples":["x"],"default":"y","$comment":"c"}}}},"patternProperties":{"^x":{}},"not":{"type":"null"}}`,
			`{"type":"OBJECT","properties":{"a":{"type":"OBJECT","properties":{"b":{"type":"STRING"}}}}}`},
		{"property names that look like keywords are kept",
			`{"type":"object","properties":{"$schema":{"type":"string"},"type":{"type":"string"},"additionalProperties":{"type":"boolean"}},"required":["type","$schema","missing"]}`,
			`{"type":"OBJECT","properties":{"$schema":{"type":"STRING"},"type":{"type":"STRING"},"additionalProperties":{"type":"BOOLEAN"}},"required":["type","$schema"]}`},
		{"$ref into $defs is inlined, siblings win",
			`{"type":"object","$defs":{"Pet":{"type":"object","description":"a pet","properties":{"name":{"type":"string"}},"required":["name"]}},"properties":{"pet":{"$ref":"#/$defs/Pet","description":"the pet"}}}`,
			`{"type":"OBJECT","properties":{"pet":{"type":"OBJECT","description":"the pet","properties":{"name":{"type":"STRING"}},"required":["name"]}}}`},
		{"definitions and escaped pointers",
			`{"type":"object","definitions":{"a/b":{"type":"integer"}},"properties":{"n":{"$ref":"#/definitions/a~1b"}}}`,
			`{"type":"OBJECT","properties":{"n":{"type":"INTEGER"}}}`},
		{"recursive $ref stops where it recurs",
			`{"$ref":"#/$defs/Node","$defs":{"Node":{"type":"object","properties":{"value":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/Node"}}}}}}`,
			`{"type":"OBJECT","properties":{"value":{"type":"STRING"},"children":{"type":"ARRAY","items":{}}}}`},
		{"unresolvable and remote refs are dropped",
			`{"type":"object","properties":{"a":{"$ref":"#/nowhere","description":"d"},"b":{"$ref":"https://example.com/s.json"}}}`,
			`{"type":"OBJECT","properties":{"a":{"description":"d"},"b":{}}}`},
		{"allOf is merged",
			`{"allOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"properties":{"b":{"type":"number"}},"required":["b","a"]}]}`,
			`{"type":"OBJECT","properties":{"a":{"type":"STRING"},"b":{"type":"NUMBER"}},"required":["a","b"]}`},
		{"Optional: anyOf with null becomes nullable, inlined",
			`{"anyOf":[{"type":"string","maxLength":5},{"type":"null"}],"description":"maybe"}`,
			`{"description":"maybe","type":"STRING","maxLength":5,"nullable":true}`},
		{"oneOf becomes anyOf, null taken out",
			`{"oneOf":[{"type":"string"},{"type":"integer","format":"int64"},{"type":"null"}]}`,
			`{"anyOf":[{"type":"STRING"},{"type":"INTEGER","format":"int64"}],"nullable":true}`},
		{"type lists",
			`{"type":"object","properties":{"a":{"type":["string","null"]},"b":{"type":["string","integer"]},"c":{"type":"null"}}}`,
			`{"type":"OBJECT","properties":{"a":{"type":"STRING","nullable":true},"b":{"anyOf":[{"type":"STRING"},{"type":"INTEGER"}]},"c":{"nullable":true}}}`},
		{"enums and const become strings",
			`{"type":"object","properties":{"e":{"type":"string","enum":["a","b",null]},"n":{"type":"integer","enum":[1,2]},"c":{"const":"only"},"o":{"enum":[{"x":1}]}}}`,
			`{"type":"OBJECT","properties":{"e":{"type":"STRING","enum":["a","b"],"nullable":true},"n":{"type":"INTEGER","enum":["1","2"]},"c":{"enum":["only"]},"o":{}}}`},
		{"formats Gemini does not know are dropped",
			`{"type":"object","properties":{"u":{"type":"string","format":"uri"},"d":{"type":"string","format":"date-time"},"f":{"type":"number","format":"double"},"i":{"type":"integer","format":"uint8"}}}`,
			`{"type":"OBJECT","properties":{"u":{"type":"STRING"},"d":{"type":"STRING","format":"date-time"},"f":{"type":"NUMBER","format":"double"},"i":{"type":"INTEGER"}}}`},
		{"constraints kept, exclusive bounds and bad values dropped",
			`{"type":"array","minItems":1,"maxItems":3,"uniqueItems":true,"items":{"type":"number","minimum":0,"maximum":9.5,"exclusiveMaximum":10,"multipleOf":0.5},"maxLength":-1}`,
			`{"type":"ARRAY","minItems":1,"maxItems":3,"items":{"type":"NUMBER","minimum":0,"maximum":9.5}}`},
		{"tuple items",
			`{"type":"array","items":[{"type":"string"},{"type":"integer"}]}`,
			`{"type":"ARRAY","items":{"anyOf":[{"type":"STRING"},{"type":"INTEGER"}]}}`},
		{"boolean subschemas",
			`{"type":"object","properties":{"any":true,"never":false},"required":["any","never"]}`,
			`{"type":"OBJECT","properties":{"any":{}},"required":["any"]}`},
		{"Gemini's own form passes through",
			`{"type":"OBJECT","nullable":true,"propertyOrdering":["b","a"],"properties":{"a":{"type":"STRING","pattern":"^x"},"b":{"type":"INTEGER","minimum":1}}}`,
			`{"type":"OBJECT","propertyOrdering":["b","a"],"properties":{"a":{"type":"STRING","pattern":"^x"},"b":{"type":"INTEGER","minimum":1}},"nullable":true}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := cleanSchema([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("cleanSchema =\n%s\nwant\n%s", got, tt.want)
			}
			again, err := cleanSchema(got)
			if err != nil || string(again) != string(got) {
				t.Errorf("cleaning is not idempotent:\n%s\nthen\n%s (%v)", got, again, err)
			}
		})
	}
}

// TestCleanSchemaBounded: a deeply nested or self-referencing schema ends in
// bounded output instead of looping.
func TestCleanSchemaBounded(t *testing.T) {
	deep := strings.Repeat(`{"type":"array","items":`, 200) + `{"type":"string"}` + strings.Repeat(`}`, 200)
	out, err := cleanSchema([]byte(deep))
	if err != nil || !gjson.ValidBytes(out) || len(out) > 2000 {
		t.Errorf("deep schema: %d bytes, err %v", len(out), err)
	}
	// Two references to each other, used many times over.
	mutual := `{"$defs":{"A":{"type":"object","properties":{"b1":{"$ref":"#/$defs/B"},"b2":{"$ref":"#/$defs/B"}}},"B":{"type":"object","properties":{"a1":{"$ref":"#/$defs/A"},"a2":{"$ref":"#/$defs/A"}}}},"$ref":"#/$defs/A"}`
	out, err = cleanSchema([]byte(mutual))
	if err != nil || !gjson.ValidBytes(out) || len(out) > 2000 {
		t.Errorf("mutual refs: %s, err %v", out, err)
	}
	if _, err := cleanSchema([]byte(`"string"`)); err == nil {
		t.Error("a non-object schema gave no error")
	}
}
