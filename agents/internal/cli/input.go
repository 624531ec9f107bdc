package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	yamlv2 "go.yaml.in/yaml/v2"
	"sigs.k8s.io/yaml"
)

// readDocuments reads objects from a YAML or JSON file ("-": stdin): one
// object, a list of objects, or several YAML documents.
func readDocuments(path string, stdin io.Reader) ([]obj, error) {
	data, err := readInput(path, stdin)
	if err != nil {
		return nil, err
	}
	docs, err := parseDocuments(data)
	if err != nil {
		return nil, usagef("%s: %v", displayPath(path), err)
	}
	return docs, nil
}

// readInput reads the whole file at path ("-": stdin); a file it cannot read is a usage error.
func readInput(path string, stdin io.Reader) ([]byte, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, usagef("cannot read %s: %v", path, err)
	}
	return data, nil
}

func displayPath(path string) string {
	if path == "-" {
		return "standard input"
	}
	return path
}

// parseDocuments splits YAML documents (JSON is YAML) and decodes each as JSON
// values would be: objects, or lists of objects.
func parseDocuments(data []byte) ([]obj, error) {
	decoder := yamlv2.NewDecoder(bytes.NewReader(data))
	var out []obj
	for index := 1; ; index++ {
		var doc any
		err := decoder.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if doc == nil {
			continue
		}
		objects, err := objectsOf(doc)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", index, err)
		}
		out = append(out, objects...)
	}
	if len(out) == 0 {
		return nil, errors.New("no object in it")
	}
	return out, nil
}

// objectsOf converts one decoded YAML document to JSON objects.
func objectsOf(doc any) ([]obj, error) {
	text, err := yamlv2.Marshal(doc)
	if err != nil {
		return nil, err
	}
	asJSON, err := yaml.YAMLToJSON(text)
	if err != nil {
		return nil, err
	}
	var value any
	if err := json.Unmarshal(asJSON, &value); err != nil {
		return nil, err
	}
	switch v := value.(type) {
	case map[string]any:
		return []obj{v}, nil
	case []any:
		out := make([]obj, 0, len(v))
		for i, element := range v {
			o, ok := element.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("item %d is not an object", i+1)
			}
			out = append(out, o)
		}
		return out, nil
	}
	return nil, errors.New("not an object or a list of objects")
}

// applySets applies --set key=value (key may be a dotted path into nested
// objects; value is JSON when it parses as JSON, else a string).
func applySets(o obj, sets []string) error {
	for _, set := range sets {
		key, raw, ok := strings.Cut(set, "=")
		if !ok || key == "" {
			return usagef("--set %q: use key=value", set)
		}
		var value any
		if err := json.Unmarshal([]byte(raw), &value); err != nil {
			value = raw
		}
		parts := strings.Split(key, ".")
		target := o
		for _, part := range parts[:len(parts)-1] {
			next, ok := target[part].(map[string]any)
			if !ok {
				next = obj{}
				target[part] = next
			}
			target = next
		}
		target[parts[len(parts)-1]] = value
	}
	return nil
}

// bodyInput is what create and update read: -f files and --set values.
type bodyInput struct {
	file string
	sets []string
}

// documents are the objects to send: the file's (or one empty object), each with the --set values.
func (in bodyInput) documents(stdin io.Reader) ([]obj, error) {
	docs := []obj{{}}
	if in.file != "" {
		var err error
		if docs, err = readDocuments(in.file, stdin); err != nil {
			return nil, err
		}
	}
	for _, doc := range docs {
		if err := applySets(doc, in.sets); err != nil {
			return nil, err
		}
	}
	return docs, nil
}
