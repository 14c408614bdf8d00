{{/* deploy/helm/lakegate/templates/_helpers.tpl: names and labels. */}}
{{- define "lakegate.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "lakegate.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "lakegate.selectorLabels" -}}
app.kubernetes.io/name: {{ include "lakegate.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "lakegate.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "lakegate.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "lakegate.secretName" -}}
{{- default (include "lakegate.fullname" .) .Values.identity.existingSecret -}}
{{- end -}}

{{- /*
lakegate.checkReplicas refuses replicas that would each serve a catalog of
their own: SQLite is a file on the pod's /data, and a warehouse on a path
(not s3://, gs://, abfss://...) is on that emptyDir unless a claim is named.
*/ -}}
{{- define "lakegate.checkReplicas" -}}
{{- $n := int .Values.replicaCount -}}
{{- if gt $n 1 -}}
{{- if eq .Values.catalog.database "sqlite" -}}
{{- fail (printf "replicaCount=%d with catalog.database=sqlite: each pod would open a SQLite file of its own on its own /data, so the replicas would serve %d different catalogs. Set catalog.database=postgres with catalog.postgresDSN, and a warehouse every pod reaches (catalog.warehouse=s3://...), or replicaCount=1 (docs/deploy.md, \"Helm\")" $n $n) -}}
{{- end -}}
{{- $wh := .Values.catalog.warehouse -}}
{{- $local := or (not (regexMatch "^[a-zA-Z][a-zA-Z0-9+.-]*://" $wh)) (hasPrefix "file:" $wh) -}}
{{- if and $local (not .Values.persistence.existingClaim) -}}
{{- fail (printf "replicaCount=%d with catalog.warehouse=%s on /data, an emptyDir per pod: a table one pod writes would be missing on the others. Set catalog.warehouse to a location every pod reaches (s3://...), or name a claim they share (persistence.existingClaim, ReadWriteMany), or replicaCount=1 (docs/deploy.md, \"Helm\")" $n $wh) -}}
{{- end -}}
{{- end -}}
{{- end -}}
