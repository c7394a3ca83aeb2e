// Package reconcile does, for one Flux Kustomization, what source-controller and
// kustomize-controller do between the git checkout and the apply, with Flux's own libraries
// at the versions the controllers build with (versions.env): the archive filter, the
// generator, the secure build, postBuild substitution, the read-back and what the apply
// normalizes. The oracle (oracle/main.go) and the suite generator (oracle/suites) run it.
//
// Each step cites the controller file and function it follows
// (fluxcd/kustomize-controller internal/controller/kustomization_controller.go).
package reconcile

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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
	"sigs.k8s.io/kustomize/api/provider"
	"sigs.k8s.io/kustomize/api/resource"
)

// Job is one Kustomization to reconcile.
type Job struct {
	ID string `json:"id"`
	// Root is the source: a git checkout when Archive is set (source-controller's filter
	// runs on it), else the artifact as kustomize-controller unpacks it.
	Root string `json:"root"`
	// Archive, when set, is the GitRepository whose artifact Root becomes.
	Archive *ArchiveSpec `json:"archive,omitempty"`
	// Kustomization is the Flux Kustomization object.
	Kustomization map[string]interface{} `json:"kustomization"`
	// Objects are the ConfigMaps and Secrets on the cluster (postBuild.substituteFrom reads
	// those of the Kustomization's namespace), as applied.
	Objects []map[string]interface{} `json:"objects"`
	// Strict is kustomize-controller's StrictPostBuildSubstitutions feature gate.
	Strict bool `json:"strict"`
	// BuildIgnore, when set, makes the generator the one `flux build kustomization` uses
	// (generator.NewGeneratorWithIgnore: the .sourceignore files under spec.path and these
	// --ignore-paths patterns filter what it lists).
	BuildIgnore *string `json:"buildIgnore,omitempty"`
}

// ArchiveSpec is what source-controller's archive of a GitRepository depends on.
type ArchiveSpec struct {
	// Ignore is the GitRepository's spec.ignore (nil when unset).
	Ignore *string `json:"ignore,omitempty"`
}

// Object is one object as the apply receives it: kustomize's print, and the content.
type Object struct {
	YAML   string                 `json:"yaml"`
	Object map[string]interface{} `json:"object"`
}

// Result is a Job's outcome.
type Result struct {
	ID      string   `json:"id"`
	OK      bool     `json:"ok"`
	Objects []Object `json:"objects,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// Do runs a job; a panic of Flux's code is its error, as controller-runtime recovers it.
func Do(j Job) Result {
	objs, err := run(j)
	r := Result{ID: j.ID, OK: err == nil, Objects: objs}
	if err != nil {
		r.Error = err.Error()
	}
	return r
}

// run reconciles one job in a working copy of its source, as the controller does in the
// temporary folder it unpacks the artifact into (reconcile: "create tmp dir", "extract
// artifact"); the generator writes its kustomization.yaml there, never in the input.
func run(j Job) (objs []Object, err error) {
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
	if j.Archive != nil {
		if err := Archive(j.Root, workDir, j.Archive.Ignore); err != nil {
			return nil, fmt.Errorf("archiving the source: %w", err)
		}
	} else if err := copyTree(j.Root, workDir); err != nil {
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

	// generate: generator.NewGenerator(workDir, obj).WriteFile(dirPath); `flux build
	// kustomization` (flux2 internal/build/build.go) uses NewGeneratorWithIgnore("", ...).
	gen := generator.NewGenerator(workDir, u)
	if j.BuildIgnore != nil {
		gen = generator.NewGeneratorWithIgnore("", *j.BuildIgnore, u)
	}
	if _, err := gen.WriteFile(dirPath); err != nil {
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
	// The whole stream must read back (a document that does not fails the Kustomization).
	if _, err := ssautil.ReadObjects(bytes.NewReader(resources)); err != nil {
		return nil, err
	}
	// What ReadObjects made of each resource, in order (each resource's print read back on
	// its own, which is what reading the whole stream does document by document): nothing
	// for what is not a Kubernetes object it applies (no name or apiVersion, a kustomize
	// Kustomization), the object itself, or for a List (a top-level `items` list,
	// Unstructured.IsList) its items in its place (EachListItem).
	for _, res := range m.Resources() {
		y, err := res.AsYAML()
		if err != nil {
			return nil, err
		}
		read, err := ssautil.ReadObjects(bytes.NewReader(y))
		if err != nil {
			return nil, err
		}
		content, err := res.Map()
		if err != nil {
			return nil, err
		}
		if (&unstructured.Unstructured{Object: content}).IsList() {
			for _, item := range read {
				// The apply sends each item to the API server, which refuses one that is not
				// an object it can name: offline, the Kustomization fails here.
				if item.GetAPIVersion() == "" || item.GetKind() == "" || item.GetName() == "" {
					b, _ := json.Marshal(item.Object)
					return nil, fmt.Errorf("apply: an item of a List without apiVersion, kind or name: %s", b)
				}
				itemRes, err := factory.FromMap(item.Object)
				if err != nil {
					return nil, err
				}
				o, err := applied(itemRes, item, u)
				if err != nil {
					return nil, err
				}
				objs = append(objs, o)
			}
			continue
		}
		for _, obj := range read {
			o, err := applied(res, obj, u)
			if err != nil {
				return nil, err
			}
			objs = append(objs, o)
		}
	}
	return objs, nil
}

// factory makes kustomize resources of the items of a List (printed as kustomize prints).
var factory = provider.NewDefaultDepProvider().GetResourceFactory()

// applied is one object as the controller hands it to the apply: the build's object
// `obj` (build: m.AsYaml, read back by ssautil.ReadObjects), with Secret `stringData` folded into
// `data` (fluxcd/pkg ssa/normalize normalizeSecret, run by apply's normalize.UnstructuredList)
// and spec.commonMetadata set (apply: ssautil.SetCommonMetadata). The YAML is kustomize's
// print of it; an object those steps changed is printed again from its new content, as
// fluxsim reprints it.
func applied(res *resource.Resource, obj *unstructured.Unstructured, ks unstructured.Unstructured) (Object, error) {
	changed := false
	// A SOPS-encrypted Secret is decrypted by the controller before this (build:
	// dec.DecryptResource) with keys an offline check does not have; it is left as built,
	// as fluxsim leaves it (apply refuses one still encrypted: decryptor.IsEncryptedSecret).
	_, encrypted := obj.Object["sops"]
	if obj.GetAPIVersion() == "v1" && obj.GetKind() == "Secret" && !encrypted {
		if sd, ok, _ := unstructured.NestedStringMap(obj.Object, "stringData"); ok {
			var secret corev1.Secret
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &secret); err != nil {
				return Object{}, fmt.Errorf("Secret/%s: %w", obj.GetName(), err)
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
			return Object{}, err
		}
		if err := res.UnmarshalJSON(b); err != nil {
			return Object{}, err
		}
	}
	y, err := res.AsYAML()
	if err != nil {
		return Object{}, err
	}
	return Object{YAML: string(y), Object: obj.Object}, nil
}

// encodedBytes is how a []byte is written in JSON (base64), as the typed Secret's data is.
func encodedBytes(b []byte) string {
	out, _ := json.Marshal(b)
	return strings.Trim(string(out), `"`)
}

// fakeClient holds the job's ConfigMaps and Secrets, as the cluster would for LoadVariables
// (oracle/helm has its twin: see there why it is not shared).
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
				// One the API server cannot store (a field of the wrong type) is on no
				// cluster: substituteFrom does not find it.
				continue
			}
			objs = append(objs, &cm)
		case "Secret":
			var s corev1.Secret
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o, &s); err != nil {
				continue
			}
			// The API server stores stringData in data (k8s.io/kubernetes
			// pkg/apis/core/v1 conversion); the fake client does not.
			for k, v := range s.StringData {
				if s.Data == nil {
					s.Data = map[string][]byte{}
				}
				s.Data[k] = []byte(v)
			}
			s.StringData = nil
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
