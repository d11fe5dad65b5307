package config

import (
	"reflect"
	"strings"
	"sync"

	"github.com/ask-cli/ask/internal/hooks"
	"github.com/ask-cli/ask/internal/settings"
)

// shape is what a value of the file may be, as the strict walk checks it:
// the settings' keys come from the rows of package settings, the sections
// that are not settings (providers, mcpServers) from their structs.
type shape struct {
	kind   shapeKind
	fields map[string]*shape // an object's keys
	elem   *shape            // a list's items, a map's values
}

type shapeKind int

const (
	shapeString shapeKind = iota
	shapeBool
	shapeInt
	shapeFloat
	shapeList
	shapeObject // fixed keys
	shapeMap    // keys chosen by the user (names of providers, servers)
)

var stringShape = &shape{kind: shapeString}

// fileShape is the whole file: a layer, its profiles (layers that do not
// nest) and the MCP servers.
var fileShape = sync.OnceValue(func() *shape {
	top := layerShape()
	top.fields["profiles"] = &shape{kind: shapeMap, elem: layerShape()}
	top.fields["mcpServers"] = &shape{kind: shapeMap, elem: shapeOf(reflect.TypeFor[MCPServer]())}
	top.fields["hooks"] = shapeOf(reflect.TypeFor[hooks.Config]())
	top.fields["prices"] = &shape{kind: shapeMap, elem: shapeOf(reflect.TypeFor[Price]())}
	return top
})

// layerShape is one layer: every row's key (a dotted key is an object
// inside the layer), the providers' sections and the aliases.
func layerShape() *shape {
	l := &shape{kind: shapeObject, fields: map[string]*shape{
		"providers": {kind: shapeMap, elem: shapeOf(reflect.TypeFor[Provider]())},
		"aliases":   {kind: shapeMap, elem: stringShape},
	}}
	for _, r := range settings.Rows() {
		if r.Key == "" {
			continue
		}
		obj := l
		path := strings.Split(r.Key, ".")
		for _, name := range path[:len(path)-1] {
			if obj.fields[name] == nil {
				obj.fields[name] = &shape{kind: shapeObject, fields: map[string]*shape{}}
			}
			obj = obj.fields[name]
		}
		obj.fields[path[len(path)-1]] = kindShape(r.Kind)
	}
	return l
}

func kindShape(k settings.Kind) *shape {
	switch k {
	case settings.Bool:
		return &shape{kind: shapeBool}
	case settings.Int:
		return &shape{kind: shapeInt}
	case settings.Float:
		return &shape{kind: shapeFloat}
	case settings.List:
		return &shape{kind: shapeList, elem: stringShape}
	}
	return stringShape // a string, or a duration written as one
}

// shapeOf is the shape of a struct the file decodes into, by its JSON tags.
func shapeOf(t reflect.Type) *shape {
	switch t.Kind() {
	case reflect.Bool:
		return &shape{kind: shapeBool}
	case reflect.Int:
		return &shape{kind: shapeInt}
	case reflect.Float64:
		return &shape{kind: shapeFloat}
	case reflect.Pointer:
		return shapeOf(t.Elem())
	case reflect.Slice:
		return &shape{kind: shapeList, elem: shapeOf(t.Elem())}
	case reflect.Map:
		return &shape{kind: shapeMap, elem: shapeOf(t.Elem())}
	case reflect.Struct:
		s := &shape{kind: shapeObject, fields: map[string]*shape{}}
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
			if sf.IsExported() && name != "" && name != "-" {
				s.fields[name] = shapeOf(sf.Type)
			}
		}
		return s
	}
	return stringShape
}

// plural names many values of the shape: "a list of " + plural.
func (s *shape) plural() string {
	switch s.kind {
	case shapeBool:
		return "true or false values"
	case shapeInt:
		return "whole numbers"
	case shapeFloat:
		return "numbers"
	case shapeList:
		return "lists"
	case shapeObject, shapeMap:
		return "objects"
	}
	return "strings"
}

// describe says what the shape is, for "want ..., got ...".
func (s *shape) describe() string {
	switch s.kind {
	case shapeBool:
		return "true or false"
	case shapeInt:
		return "a whole number"
	case shapeFloat:
		return "a number"
	case shapeList:
		return "a list of " + s.elem.plural()
	case shapeObject, shapeMap:
		return "an object"
	}
	return "a string"
}
