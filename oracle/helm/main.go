//go:build fluxsim_helm_oracle

// Command fluxsim-helm-oracle does, for one HelmRelease at a time, what helm-controller
// does to install it, with helm-controller's own code: scripts/oracle-check --helm builds it
// inside a copy of the helm-controller module at the version versions.env pins
// (HELM_CONTROLLER; its `api` module from the proxy), so that helm-controller's internal
// packages (the post-renderers, the release name) are its own, and every module it links
// (helm.sh/helm/v4, fluxcd/pkg/chartutil) is at the controller's version by construction.
// The build tag keeps it out of the oracle's own module.
//
// Input: JSON jobs, one per line:
//
//	{"id", "helmRelease": {...}, "chart": "/abs/chart/folder", "objects": [{...}],
//	 "kubeVersion": "v1.36.0", "apiVersions": [...]}
//
// Output: {"id", "ok", "objects": [{...}], "error"}: every object the install applies (the
// chart's CRDs by the CRD policy, the manifest, the hooks that run at install), each
// namespaced one without a namespace in the release's, as helm's kube client builds them.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/go-logr/logr"
	helmaction "helm.sh/helm/v4/pkg/action"
	helmcommon "helm.sh/helm/v4/pkg/chart/common"
	helmloader "helm.sh/helm/v4/pkg/chart/v2/loader"
	kubefake "helm.sh/helm/v4/pkg/kube/fake"
	helmrelease "helm.sh/helm/v4/pkg/release/v1"
	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	v2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/helm-controller/internal/postrender"
	"github.com/fluxcd/helm-controller/internal/release"
	"github.com/fluxcd/pkg/chartutil"
)

type job struct {
	ID          string                   `json:"id"`
	HelmRelease map[string]interface{}   `json:"helmRelease"`
	Chart       string                   `json:"chart"`
	Objects     []map[string]interface{} `json:"objects"`
	KubeVersion string                   `json:"kubeVersion"`
	APIVersions []string                 `json:"apiVersions"`
}

type result struct {
	ID      string                   `json:"id"`
	OK      bool                     `json:"ok"`
	Objects []map[string]interface{} `json:"objects,omitempty"`
	Error   string                   `json:"error,omitempty"`
}

func main() {
	out := json.NewEncoder(os.Stdout)
	out.SetEscapeHTML(false)
	dec := json.NewDecoder(bufio.NewReader(os.Stdin))
	for {
		var j job
		if err := dec.Decode(&j); err == io.EOF {
			return
		} else if err != nil {
			fmt.Fprintf(os.Stderr, "helm oracle: reading a job: %v\n", err)
			os.Exit(2)
		}
		objs, err := run(j)
		r := result{ID: j.ID, OK: err == nil, Objects: objs}
		if err != nil {
			r.Error = err.Error()
		}
		if err := out.Encode(r); err != nil {
			os.Exit(2)
		}
	}
}

func run(j job) (objs []map[string]interface{}, err error) {
	defer func() {
		if r := recover(); r != nil {
			objs, err = nil, fmt.Errorf("panic: %v", r)
		}
	}()
	var hr v2.HelmRelease
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(j.HelmRelease, &hr); err != nil {
		return nil, fmt.Errorf("HelmRelease: %w", err)
	}
	kube, err := fakeClient(j.Objects)
	if err != nil {
		return nil, err
	}
	// helmrelease_controller.go reconcileRelease: "Compose values based from the spec and
	// references".
	values, err := chartutil.ChartValuesFromReferences(context.Background(), logr.Discard(), kube,
		hr.Namespace, hr.GetValues(), hr.Spec.ValuesFrom...)
	if err != nil {
		return nil, fmt.Errorf("values: %w", err)
	}
	chrt, err := helmloader.Load(j.Chart)
	if err != nil {
		return nil, fmt.Errorf("chart: %w", err)
	}

	cfg := helmaction.NewConfiguration(helmaction.ConfigurationSetLogger(slog.New(slog.DiscardHandler).Handler()))
	cfg.Releases = storage.Init(driver.NewMemory())
	cfg.KubeClient = &kubefake.PrintingKubeClient{Out: io.Discard, LogOutput: io.Discard}
	caps := helmcommon.DefaultCapabilities.Copy()
	if j.KubeVersion != "" {
		kv, err := helmcommon.ParseKubeVersion(j.KubeVersion)
		if err != nil {
			return nil, err
		}
		caps.KubeVersion = *kv
	}
	if len(j.APIVersions) > 0 {
		caps.APIVersions = append(caps.APIVersions, j.APIVersions...)
	}
	cfg.Capabilities = caps

	// internal/action/install.go newInstall, the fields that change what is rendered;
	// the install itself runs as a client-side dry run (no cluster).
	install := helmaction.NewInstall(cfg)
	install.ReleaseName = release.ShortenName(hr.GetReleaseName())
	install.Namespace = hr.GetReleaseNamespace()
	install.DisableHooks = hr.GetInstall().DisableHooks
	install.SkipSchemaValidation = hr.GetInstall().DisableSchemaValidation
	install.Replace = hr.GetInstall().Replace
	install.Devel = true
	install.SkipCRDs = true
	install.PostRenderer = postrender.BuildPostRenderers(&hr)
	// internal/action/post_render.go toHelmPostRenderStrategy (helm-controller v1.6.4's
	// default, UseHelm3Defaults off: combined).
	install.PostRenderStrategy = helmaction.PostRenderStrategyCombined
	if s := hr.GetPostRenderStrategy(); s != "" {
		install.PostRenderStrategy = helmaction.PostRenderStrategy(s)
	}
	install.DryRunStrategy = helmaction.DryRunClient
	install.KubeVersion = &caps.KubeVersion
	install.APIVersions = caps.APIVersions

	rlsr, err := install.RunWithContext(context.Background(), chrt, values.AsMap())
	if err != nil {
		return nil, fmt.Errorf("install: %w", err)
	}
	rls, ok := rlsr.(*helmrelease.Release)
	if !ok {
		return nil, fmt.Errorf("only the Chart API v2 is supported")
	}

	var texts []string
	// internal/action/crds.go applyCRDs: the chart's crds/ unless the policy is Skip (the
	// default is Create), with the origin labels (setOriginVisitor).
	policy := hr.GetInstall().CRDs
	if policy == "" {
		policy = v2.Create
	}
	var crds []map[string]interface{}
	if policy != v2.Skip {
		for _, c := range chrt.CRDObjects() {
			for _, doc := range releaseutil.SplitManifests(string(c.File.Data)) {
				o, err := parse(doc)
				if err != nil {
					return nil, fmt.Errorf("CRD %s: %w", c.Name, err)
				}
				if o == nil {
					continue
				}
				u := unstructured.Unstructured{Object: o}
				labels := u.GetLabels()
				if labels == nil {
					labels = map[string]string{}
				}
				labels[v2.GroupVersion.Group+"/name"] = hr.Name
				labels[v2.GroupVersion.Group+"/namespace"] = hr.Namespace
				u.SetLabels(labels)
				crds = append(crds, u.Object)
			}
		}
	}
	texts = append(texts, rls.Manifest)
	// The hooks that run at install (pre- and post-install), unless hooks are disabled; test
	// hooks run only with `helm test`.
	if !install.DisableHooks {
		for _, h := range rls.Hooks {
			for _, e := range h.Events {
				if e == helmrelease.HookPreInstall || e == helmrelease.HookPostInstall {
					texts = append(texts, h.Manifest)
					break
				}
			}
		}
	}
	objs = append(objs, crds...)
	for _, t := range texts {
		for _, doc := range releaseutil.SplitManifests(t) {
			o, err := parse(doc)
			if err != nil {
				return nil, err
			}
			if o != nil {
				objs = append(objs, o)
			}
		}
	}
	defaultNamespaces(objs, crds, install.Namespace)
	return objs, nil
}

func parse(doc string) (map[string]interface{}, error) {
	if strings.TrimSpace(doc) == "" {
		return nil, nil
	}
	var o map[string]interface{}
	if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
		return nil, err
	}
	return o, nil
}

// clusterScoped is the kinds a Kubernetes v1.36 API server serves without a namespace
// (helm's kube client asks the cluster's REST mapper; offline, this list and the CRDs of the
// release stand for it — the same premise as fluxsim's, crates/core/src/helm/postrender.rs).
var clusterScoped = map[string]bool{
	"/ComponentStatus": true, "/Namespace": true, "/Node": true, "/PersistentVolume": true,
	"admissionregistration.k8s.io/MutatingAdmissionPolicy":          true,
	"admissionregistration.k8s.io/MutatingAdmissionPolicyBinding":   true,
	"admissionregistration.k8s.io/MutatingWebhookConfiguration":     true,
	"admissionregistration.k8s.io/ValidatingAdmissionPolicy":        true,
	"admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding": true,
	"admissionregistration.k8s.io/ValidatingWebhookConfiguration":   true,
	"apiextensions.k8s.io/CustomResourceDefinition":                 true,
	"apiregistration.k8s.io/APIService":                             true,
	"authentication.k8s.io/SelfSubjectReview":                       true,
	"authentication.k8s.io/TokenReview":                             true,
	"authorization.k8s.io/SelfSubjectAccessReview":                  true,
	"authorization.k8s.io/SelfSubjectRulesReview":                   true,
	"authorization.k8s.io/SubjectAccessReview":                      true,
	"certificates.k8s.io/CertificateSigningRequest":                 true,
	"certificates.k8s.io/ClusterTrustBundle":                        true,
	"flowcontrol.apiserver.k8s.io/FlowSchema":                       true,
	"flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration":       true,
	"internal.apiserver.k8s.io/StorageVersion":                      true,
	"networking.k8s.io/IPAddress":                                   true,
	"networking.k8s.io/IngressClass":                                true,
	"networking.k8s.io/ServiceCIDR":                                 true,
	"node.k8s.io/RuntimeClass":                                      true,
	"rbac.authorization.k8s.io/ClusterRole":                         true,
	"rbac.authorization.k8s.io/ClusterRoleBinding":                  true,
	"resource.k8s.io/DeviceClass":                                   true,
	"resource.k8s.io/DeviceTaintRule":                               true,
	"resource.k8s.io/ResourceSlice":                                 true,
	"scheduling.k8s.io/PriorityClass":                               true,
	"storage.k8s.io/CSIDriver":                                      true,
	"storage.k8s.io/CSINode":                                        true,
	"storage.k8s.io/StorageClass":                                   true,
	"storage.k8s.io/VolumeAttachment":                               true,
	"storage.k8s.io/VolumeAttributesClass":                          true,
	"storagemigration.k8s.io/StorageVersionMigration":               true,
}

// defaultNamespaces is helm's kube client's Build (pkg/kube/client.go buildResourceList:
// NamespaceParam(namespace).DefaultNamespace()): a namespaced object without a namespace is
// created in the release's.
func defaultNamespaces(objs, crds []map[string]interface{}, namespace string) {
	scoped := map[string]bool{}
	for k := range clusterScoped {
		scoped[k] = true
	}
	for _, o := range append(append([]map[string]interface{}{}, crds...), objs...) {
		u := unstructured.Unstructured{Object: o}
		if u.GetKind() != "CustomResourceDefinition" {
			continue
		}
		scope, _, _ := unstructured.NestedString(o, "spec", "scope")
		group, _, _ := unstructured.NestedString(o, "spec", "group")
		kind, _, _ := unstructured.NestedString(o, "spec", "names", "kind")
		if scope == "Cluster" {
			scoped[group+"/"+kind] = true
		}
	}
	for _, o := range objs {
		u := unstructured.Unstructured{Object: o}
		gvk := u.GroupVersionKind()
		if u.GetNamespace() == "" && !scoped[gvk.Group+"/"+gvk.Kind] {
			u.SetNamespace(namespace)
		}
	}
}

// fakeClient holds the ConfigMaps and Secrets valuesFrom may read, as the API server
// stores them (a Secret's stringData in data). The twin of oracle/reconcile's fakeClient,
// kept apart on purpose: this program is built inside helm-controller's module, where the
// oracle's packages cannot be imported without pulling the oracle's module versions in.
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
				continue
			}
			objs = append(objs, &cm)
		case "Secret":
			var s corev1.Secret
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o, &s); err != nil {
				continue
			}
			for k, v := range s.StringData {
				if s.Data == nil {
					s.Data = map[string][]byte{}
				}
				s.Data[k] = []byte(v)
			}
			s.StringData = nil
			objs = append(objs, &s)
		}
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build(), nil
}
