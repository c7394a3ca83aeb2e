// Command oracle does, for one Flux Kustomization at a time, what kustomize-controller's
// reconciler does between "artifact unpacked" and "apply", with Flux's own libraries at
// the versions the controller builds with. It is fluxsim's reference for the whole
// pipeline (a test tool: it is never part of the fluxsim binary).
//
// Input: JSON jobs, one per line, on standard input:
//
//	{"id": "...", "root": "/abs/source", "kustomization": {...}, "objects": [{...}], "strict": true}
//
// `root` is the source as Flux would unpack it (only what source-controller archives),
// `kustomization` the Flux Kustomization object, `objects` the ConfigMaps and Secrets on
// the cluster that postBuild.substituteFrom may read. Output: one JSON result per line, in
// the same order: {"id", "ok", "objects": [{"yaml", "object"}], "error"}.
//
// Each step cites the controller file and function it follows
// (fluxcd/kustomize-controller internal/controller/kustomization_controller.go).
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	securejoin "github.com/cyphar/filepath-securejoin"
	generator "github.com/fluxcd/pkg/kustomize"
	ssautil "github.com/fluxcd/pkg/ssa/utils"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/kustomize/api/resource"
)

type job struct {
	ID            string                   `json:"id"`
	Root          string                   `json:"root"`
	Kustomization map[string]interface{}   `json:"kustomization"`
	Objects       []map[string]interface{} `json:"objects"`
	Strict        bool                     `json:"strict"`
}

type object struct {
	YAML   string                 `json:"yaml"`
	Object map[string]interface{} `json:"object"`
}

type result struct {
	ID      string   `json:"id"`
	OK      bool     `json:"ok"`
	Objects []object `json:"objects,omitempty"`
	Error   string   `json:"error,omitempty"`
}

func main() {
	in := bufio.NewReader(os.Stdin)
	out := json.NewEncoder(os.Stdout)
	out.SetEscapeHTML(false)
	dec := json.NewDecoder(in)
	for {
		var j job
		if err := dec.Decode(&j); err == io.EOF {
			return
		} else if err != nil {
			fmt.Fprintf(os.Stderr, "oracle: reading a job: %v\n", err)
			os.Exit(2)
		}
		objs, err := run(j)
		r := result{ID: j.ID, OK: err == nil, Objects: objs}
		if err != nil {
			r.Error = err.Error()
		}
		if err := out.Encode(r); err != nil {
			fmt.Fprintf(os.Stderr, "oracle: writing a result: %v\n", err)
			os.Exit(2)
		}
	}
}

// run reconciles one job in a working copy of its source, as the controller does in the
// temporary folder it unpacks the artifact into (reconcile: "create tmp dir", "extract
// artifact"); the generator writes its kustomization.yaml there, never in the input.
func run(j job) (objs []object, err error) {
	defer func() {
		if r := recover(); r != nil {
			objs, err = nil, fmt.Errorf("panic: %v", r)
		}
	}()
	workDir, err := os.MkdirTemp("", "fluxsim-oracle-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(workDir)
	if err := copyTree(j.Root, workDir); err != nil {
		return nil, fmt.Errorf("copying the source: %w", err)
	}
	u := unstructured.Unstructured{Object: j.Kustomization}
	path, _, _ := unstructured.NestedString(u.Object, "spec", "path")

	// reconcile: dirPath, err := securejoin.SecureJoin(tmpDir, obj.Spec.Path), then a
	// missing folder is "kustomization path not found".
	dirPath, err := securejoin.SecureJoin(workDir, path)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(dirPath); err != nil {
		return nil, fmt.Errorf("kustomization path not found: %w", err)
	}

	// generate: generator.NewGenerator(workDir, obj).WriteFile(dirPath).
	if _, err := generator.NewGenerator(workDir, u).WriteFile(dirPath); err != nil {
		return nil, fmt.Errorf("kustomize create failed: %w", err)
	}

	// build: generator.SecureBuild(workDir, dirPath, !r.NoRemoteBases); the oracle has no
	// network, so remote bases are off.
	m, err := generator.SecureBuild(workDir, dirPath, false)
	if err != nil {
		return nil, fmt.Errorf("kustomize build failed: %w", err)
	}

	kube, err := fakeClient(j.Objects)
	if err != nil {
		return nil, err
	}
	postBuild, hasPostBuild, _ := unstructured.NestedMap(u.Object, "spec", "postBuild")
	strategy, _ := postBuild["substituteStrategy"].(string)
	for _, res := range m.Resources() {
		// build: "check if resources conform to the Kubernetes API conventions".
		if res.GetName() == "" || res.GetKind() == "" || res.GetApiVersion() == "" {
			return nil, fmt.Errorf("failed to decode Kubernetes apiVersion, kind and name from: %v", res.String())
		}
		// build: "run variable substitutions" when spec.postBuild is set.
		if hasPostBuild {
			outRes, err := generator.SubstituteVariables(context.Background(), kube, u, res,
				generator.SubstituteWithStrict(j.Strict),
				generator.SubstituteWithAlways(strategy == "Always"))
			if err != nil {
				return nil, fmt.Errorf("post build failed for '%s': %w", res.GetName(), err)
			}
			if outRes != nil {
				if _, err := m.Replace(res); err != nil {
					return nil, err
				}
			}
		}
	}
	// build returns m.AsYaml(); reconcile reads it back with ssautil.ReadObjects before
	// the apply, so the objects sent are those of the printed text (a print that does not
	// read back as the object it came from is applied as it reads back).
	resources, err := m.AsYaml()
	if err != nil {
		return nil, fmt.Errorf("kustomize build failed: %w", err)
	}
	read, err := ssautil.ReadObjects(bytes.NewReader(resources))
	if err != nil {
		return nil, err
	}
	// ReadObjects leaves out, silently, what is not a Kubernetes object it applies (no name
	// or apiVersion, a kustomize Kustomization): the resources it keeps, in order.
	var kept []*resource.Resource
	for _, res := range m.Resources() {
		content, err := res.Map()
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{Object: content}
		if ssautil.IsKubernetesObject(u) && !ssautil.IsKustomization(u) {
			kept = append(kept, res)
		}
	}
	if len(read) != len(kept) {
		return nil, fmt.Errorf("%d objects printed, %d read back", len(kept), len(read))
	}
	for i, res := range kept {
		o, err := applied(res, read[i], u)
		if err != nil {
			return nil, err
		}
		objs = append(objs, o)
	}
	return objs, nil
}

// applied is one object as the controller hands it to the apply: the build's object
// `obj` (build: m.AsYaml, read back by ssautil.ReadObjects), with Secret `stringData` folded into
// `data` (fluxcd/pkg ssa/normalize normalizeSecret, run by apply's normalize.UnstructuredList)
// and spec.commonMetadata set (apply: ssautil.SetCommonMetadata). The YAML is kustomize's
// print of it; an object those steps changed is printed again from its new content, as
// fluxsim reprints it.
func applied(res *resource.Resource, obj *unstructured.Unstructured, ks unstructured.Unstructured) (object, error) {
	changed := false
	// A SOPS-encrypted Secret is decrypted by the controller before this (build:
	// dec.DecryptResource) with keys an offline check does not have; it is left as built,
	// as fluxsim leaves it (apply refuses one still encrypted: decryptor.IsEncryptedSecret).
	_, encrypted := obj.Object["sops"]
	if obj.GetAPIVersion() == "v1" && obj.GetKind() == "Secret" && !encrypted {
		if sd, ok, _ := unstructured.NestedStringMap(obj.Object, "stringData"); ok {
			var secret corev1.Secret
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &secret); err != nil {
				return object{}, fmt.Errorf("Secret/%s: %w", obj.GetName(), err)
			}
			data, _, _ := unstructured.NestedMap(obj.Object, "data")
			if data == nil {
				data = map[string]interface{}{}
			}
			for k := range sd {
				data[k] = encodedBytes([]byte(sd[k]))
			}
			unstructured.RemoveNestedField(obj.Object, "stringData")
			_ = unstructured.SetNestedMap(obj.Object, data, "data")
			changed = true
		}
	}
	labels, _, _ := unstructured.NestedStringMap(ks.Object, "spec", "commonMetadata", "labels")
	annotations, _, _ := unstructured.NestedStringMap(ks.Object, "spec", "commonMetadata", "annotations")
	if len(labels) > 0 || len(annotations) > 0 {
		ssautil.SetCommonMetadata([]*unstructured.Unstructured{obj}, labels, annotations)
		changed = true
	}
	if changed {
		b, err := json.Marshal(obj.Object)
		if err != nil {
			return object{}, err
		}
		if err := res.UnmarshalJSON(b); err != nil {
			return object{}, err
		}
	}
	y, err := res.AsYAML()
	if err != nil {
		return object{}, err
	}
	return object{YAML: string(y), Object: obj.Object}, nil
}

// encodedBytes is how a []byte is written in JSON (base64), as the typed Secret's data is.
func encodedBytes(b []byte) string {
	out, _ := json.Marshal(b)
	return strings.Trim(string(out), `"`)
}

// fakeClient holds the job's ConfigMaps and Secrets, as the cluster would for LoadVariables.
func fakeClient(objects []map[string]interface{}) (client.Client, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	var objs []client.Object
	for _, o := range objects {
		u := unstructured.Unstructured{Object: o}
		switch u.GetKind() {
		case "ConfigMap":
			var cm corev1.ConfigMap
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o, &cm); err != nil {
				return nil, fmt.Errorf("ConfigMap/%s: %w", u.GetName(), err)
			}
			objs = append(objs, &cm)
		case "Secret":
			var s corev1.Secret
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o, &s); err != nil {
				return nil, fmt.Errorf("Secret/%s: %w", u.GetName(), err)
			}
			objs = append(objs, &s)
		default:
			return nil, fmt.Errorf("a var source must be a ConfigMap or a Secret, not %s", u.GetKind())
		}
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build(), nil
}

// copyTree copies the regular files and folders of src into dst (links are not followed:
// source-controller never archives them).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return os.MkdirAll(target, 0o755)
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(target, b, 0o644)
		}
		return nil
	})
}
