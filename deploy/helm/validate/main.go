// Command validate checks the manifests `helm template` renders from
// deploy/helm/lakegate, offline (kubeconform's schemas are not reachable
// here): each YAML document is decoded strictly into its k8s.io/api type
// (unknown fields, duplicate fields and unknown kinds fail; a
// ServiceMonitor into the Prometheus Operator's type), and the documents
// are checked against each other (selectors match the pod labels, probes
// and the Services name ports the container has, every Secret, ConfigMap
// and key the pod references is rendered, an Ingress routes to a rendered
// Service's port, a ServiceMonitor selects a rendered Service and names
// its port).
//
// It is a module of its own (deploy/helm/validate/go.mod), so lakegate's
// module does not depend on k8s.io/api. Usage:
//
//	helm template lg deploy/helm/lakegate | go run . [-name what] [-caddyfile file]
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

type manifests struct {
	deployments []*appsv1.Deployment
	services    []*corev1.Service
	configMaps  map[string]*corev1.ConfigMap
	secrets     map[string]*corev1.Secret
	pdbs        []*policyv1.PodDisruptionBudget
	ingresses   []*networkingv1.Ingress
	monitors    []*monitoringv1.ServiceMonitor
}

var docSep = regexp.MustCompile(`(?m)^---[ \t]*$`)

func main() {
	name := flag.String("name", "stdin", "what is validated, for messages")
	caddyfile := flag.String("caddyfile", "", "write the ConfigMap's Caddyfile to this file")
	flag.Parse()
	in, err := io.ReadAll(bufio.NewReader(os.Stdin))
	if err != nil {
		fail("%s: %v", *name, err)
	}
	m := manifests{configMaps: map[string]*corev1.ConfigMap{}, secrets: map[string]*corev1.Secret{}}
	var kinds []string
	for _, doc := range docSep.Split(string(in), -1) {
		if isEmpty(doc) {
			continue
		}
		kind, err := m.add(doc)
		if err != nil {
			fail("%s: %v\n%s", *name, err, doc)
		}
		kinds = append(kinds, kind)
	}
	if err := m.check(); err != nil {
		fail("%s: %v", *name, err)
	}
	if *caddyfile != "" {
		for _, cm := range m.configMaps {
			if err := os.WriteFile(*caddyfile, []byte(cm.Data["Caddyfile"]), 0o644); err != nil {
				fail("%s: %v", *name, err)
			}
		}
	}
	fmt.Printf("%s: %d documents valid (%s)\n", *name, len(kinds), strings.Join(kinds, ", "))
}

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "validate: "+format+"\n", a...)
	os.Exit(1)
}

func isEmpty(doc string) bool {
	for _, l := range strings.Split(doc, "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "#") {
			return false
		}
	}
	return true
}

// strict decodes YAML into v, failing on unknown or duplicate fields.
func strict(doc string, v any) error {
	j, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		return err
	}
	if err := yaml.UnmarshalStrict([]byte(doc), &map[string]any{}); err != nil {
		return err
	}
	d := json.NewDecoder(bytes.NewReader(j))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return fmt.Errorf("trailing data")
	}
	return nil
}

func (m *manifests) add(doc string) (string, error) {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
		return "", err
	}
	if head.Metadata.Name == "" {
		return "", fmt.Errorf("%s %s without metadata.name", head.APIVersion, head.Kind)
	}
	what := head.APIVersion + " " + head.Kind
	var err error
	switch what {
	case "apps/v1 Deployment":
		v := &appsv1.Deployment{}
		err = strict(doc, v)
		m.deployments = append(m.deployments, v)
	case "v1 Service":
		v := &corev1.Service{}
		err = strict(doc, v)
		m.services = append(m.services, v)
	case "v1 ConfigMap":
		v := &corev1.ConfigMap{}
		err = strict(doc, v)
		m.configMaps[head.Metadata.Name] = v
	case "v1 Secret":
		v := &corev1.Secret{}
		err = strict(doc, v)
		m.secrets[head.Metadata.Name] = v
	case "policy/v1 PodDisruptionBudget":
		v := &policyv1.PodDisruptionBudget{}
		err = strict(doc, v)
		m.pdbs = append(m.pdbs, v)
	case "networking.k8s.io/v1 Ingress":
		v := &networkingv1.Ingress{}
		err = strict(doc, v)
		m.ingresses = append(m.ingresses, v)
	case "monitoring.coreos.com/v1 ServiceMonitor":
		v := &monitoringv1.ServiceMonitor{}
		err = strict(doc, v)
		m.monitors = append(m.monitors, v)
	default:
		return "", fmt.Errorf("unknown kind %q", what)
	}
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", head.Kind, head.Metadata.Name, err)
	}
	return head.Kind, nil
}

func matches(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func (m *manifests) check() error {
	if len(m.deployments) != 1 {
		return fmt.Errorf("want one Deployment, have %d", len(m.deployments))
	}
	d := m.deployments[0]
	pod := d.Spec.Template
	if d.Spec.Selector == nil || !matches(d.Spec.Selector.MatchLabels, pod.Labels) {
		return fmt.Errorf("Deployment %s: selector does not match the pod labels", d.Name)
	}
	if len(pod.Spec.Containers) == 0 {
		return fmt.Errorf("Deployment %s: no container", d.Name)
	}
	ports := map[string]bool{}
	for _, c := range pod.Spec.Containers {
		if c.Image == "" {
			return fmt.Errorf("container %s: no image", c.Name)
		}
		for _, p := range c.Ports {
			ports[p.Name] = true
		}
		for what, p := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
			if p == nil || p.HTTPGet == nil {
				return fmt.Errorf("container %s: no HTTP %s probe", c.Name, what)
			}
			if n := p.HTTPGet.Port.StrVal; n != "" && !ports[n] {
				return fmt.Errorf("container %s: %s probe names port %q the container lacks", c.Name, what, n)
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
				continue
			}
			ref := e.ValueFrom.SecretKeyRef
			s, ok := m.secrets[ref.Name]
			if !ok {
				// A Secret the user names (identity.existingSecret) is not rendered.
				fmt.Printf("note: env %s reads Secret %s, which is not rendered\n", e.Name, ref.Name)
				continue
			}
			if _, ok := s.Data[ref.Key]; !ok {
				if _, ok := s.StringData[ref.Key]; !ok {
					return fmt.Errorf("env %s: Secret %s has no key %q", e.Name, ref.Name, ref.Key)
				}
			}
		}
		if c.SecurityContext == nil || c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem {
			return fmt.Errorf("container %s: root file system is not read-only", c.Name)
		}
	}
	if sc := pod.Spec.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		return fmt.Errorf("pod: runAsNonRoot is not set")
	}
	for _, v := range pod.Spec.Volumes {
		if v.ConfigMap != nil {
			cm, ok := m.configMaps[v.ConfigMap.Name]
			if !ok {
				return fmt.Errorf("volume %s: ConfigMap %s is not rendered", v.Name, v.ConfigMap.Name)
			}
			if _, ok := cm.Data["Caddyfile"]; !ok {
				return fmt.Errorf("ConfigMap %s: no Caddyfile", cm.Name)
			}
		}
	}
	for _, s := range m.services {
		if !matches(s.Spec.Selector, pod.Labels) {
			return fmt.Errorf("Service %s: selector does not match the pod labels", s.Name)
		}
		for _, p := range s.Spec.Ports {
			if n := p.TargetPort.StrVal; n != "" && !ports[n] {
				return fmt.Errorf("Service %s: targetPort %q is no container port", s.Name, n)
			}
		}
	}
	for _, p := range m.pdbs {
		if p.Spec.Selector == nil || !matches(p.Spec.Selector.MatchLabels, pod.Labels) {
			return fmt.Errorf("PodDisruptionBudget %s: selector does not match the pod labels", p.Name)
		}
	}
	for _, in := range m.ingresses {
		if err := m.checkIngress(in); err != nil {
			return fmt.Errorf("Ingress %s: %w", in.Name, err)
		}
	}
	for _, sm := range m.monitors {
		if err := m.checkMonitor(sm); err != nil {
			return fmt.Errorf("ServiceMonitor %s: %w", sm.Name, err)
		}
	}
	return nil
}

// service is the rendered Service of that name, or nil.
func (m *manifests) service(name string) *corev1.Service {
	for _, s := range m.services {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// hasPort says whether s has a port of that name (or number, when name is
// empty).
func hasPort(s *corev1.Service, name string, number int32) bool {
	for _, p := range s.Spec.Ports {
		if (name != "" && p.Name == name) || (name == "" && p.Port == number) {
			return true
		}
	}
	return false
}

// checkIngress: every path routes to a port of a rendered Service.
func (m *manifests) checkIngress(in *networkingv1.Ingress) error {
	if len(in.Spec.Rules) == 0 {
		return fmt.Errorf("no rule")
	}
	for _, r := range in.Spec.Rules {
		if r.HTTP == nil || len(r.HTTP.Paths) == 0 {
			return fmt.Errorf("rule %q has no path", r.Host)
		}
		for _, p := range r.HTTP.Paths {
			b := p.Backend.Service
			if b == nil {
				return fmt.Errorf("path %s has no Service backend", p.Path)
			}
			s := m.service(b.Name)
			if s == nil {
				return fmt.Errorf("path %s: Service %s is not rendered", p.Path, b.Name)
			}
			if !hasPort(s, b.Port.Name, b.Port.Number) {
				return fmt.Errorf("path %s: Service %s has no port %q/%d", p.Path, b.Name, b.Port.Name, b.Port.Number)
			}
		}
	}
	return nil
}

// checkMonitor: the selector picks a rendered Service, and every endpoint
// names one of its ports.
func (m *manifests) checkMonitor(sm *monitoringv1.ServiceMonitor) error {
	var picked []*corev1.Service
	for _, s := range m.services {
		if matches(sm.Spec.Selector.MatchLabels, s.Labels) {
			picked = append(picked, s)
		}
	}
	if len(picked) != 1 {
		return fmt.Errorf("selector picks %d rendered Services, want 1", len(picked))
	}
	if len(sm.Spec.Endpoints) == 0 {
		return fmt.Errorf("no endpoint")
	}
	for _, e := range sm.Spec.Endpoints {
		if e.Port == "" || !hasPort(picked[0], e.Port, 0) {
			return fmt.Errorf("endpoint names no port of Service %s", picked[0].Name)
		}
	}
	return nil
}
