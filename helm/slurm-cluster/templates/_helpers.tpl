{{/* SPDX-License-Identifier: Apache-2.0 */}}
{{/* Chart name. */}}
{{- define "slurm-cluster.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Prefix of every object name, at most 30 characters: a nodeset
     StatefulSet "<fullname>-<nodeset>" (nodeset names: at most 20) then stays
     within the 52 characters Kubernetes allows a StatefulSet name (its pods'
     controller-revision-hash label must fit 63), and its pods' hostnames,
     the Slurm node names, within 63. */}}
{{- define "slurm-cluster.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 30 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 30 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 30 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "slurm-cluster.clusterName" -}}
{{- default .Release.Name .Values.clusterName | replace "-" "_" | trunc 40 }}
{{- end }}

{{/* Common labels; pass (dict "ctx" $ "component" "x"). */}}
{{- define "slurm-cluster.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .ctx.Chart.Name .ctx.Chart.Version | replace "+" "_" }}
{{ include "slurm-cluster.selectorLabels" . }}
app.kubernetes.io/version: {{ .ctx.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
app.kubernetes.io/part-of: slurm-jail
{{- end }}

{{- define "slurm-cluster.selectorLabels" -}}
app.kubernetes.io/name: {{ include "slurm-cluster.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* Image reference; pass (dict "ctx" $ "name" "worker" "override" "..."
     ["arch" ARCH]). Images are built per architecture, as
     `<name>:<tag>` for the build host's: an architecture other than the
     default one (amd64) gets `<tag>-<arch>`. An override is used as it is
     (for another architecture: a multi-arch manifest, or that
     architecture's image). */}}
{{- define "slurm-cluster.image" -}}
{{- if .override }}
{{- .override }}
{{- else }}
{{- $v := .ctx.Values.image }}
{{- $prefix := ternary (printf "%s/" (trimSuffix "/" $v.registry)) "" (ne $v.registry "") }}
{{- $tag := default (printf "%s-slurm%s" .ctx.Chart.AppVersion (include "slurm-cluster.slurmRelease" .ctx)) $v.tag }}
{{- $arch := .arch | default (include "slurm-cluster.defaultArch" .ctx) }}
{{- if ne $arch (include "slurm-cluster.defaultArch" .ctx) }}{{ $tag = printf "%s-%s" $tag $arch }}{{ end }}
{{- printf "%sslurm-jail/%s:%s" $prefix .name $tag }}
{{- end }}
{{- end }}

{{/* The architecture of the controller, login, accounting and the default
     jail; nodesets without `arch` run on it too. */}}
{{- define "slurm-cluster.defaultArch" -}}
amd64
{{- end }}

{{/* The architectures of the enabled nodesets other than the default one,
     sorted, as a JSON list (each has a jail of its own). */}}
{{- define "slurm-cluster.otherArchs" -}}
{{- $default := include "slurm-cluster.defaultArch" . }}
{{- $out := list }}
{{- range $name, $ns := (include "slurm-cluster.nodesets" . | fromYaml) }}
{{- $arch := $ns.arch | default $default }}
{{- if ne $arch $default }}{{ $out = append $out $arch }}{{ end }}
{{- end }}
{{- $out | uniq | sortAlpha | toJson }}
{{- end }}

{{/* "true" when some enabled nodeset runs on another architecture than
     the default one: then every pod of the chart that runs a slurm-jail
     image selects its architecture (kubernetes.io/arch). A
     single-architecture cluster renders no such selector. */}}
{{- define "slurm-cluster.mixedArch" -}}
{{- gt (len (include "slurm-cluster.otherArchs" . | fromJsonArray)) 0 }}
{{- end }}

{{/* A pod spec's nodeSelector block (or nothing): the given map, plus
     kubernetes.io/arch in a mixed cluster. Pass (dict "ctx" $ "nodeSelector"
     MAP ["arch" ARCH]), ARCH default the default architecture. */}}
{{- define "slurm-cluster.nodeSelector" -}}
{{- $sel := deepCopy (.nodeSelector | default dict) }}
{{- if eq (include "slurm-cluster.mixedArch" .ctx) "true" }}
{{- $_ := set $sel "kubernetes.io/arch" (.arch | default (include "slurm-cluster.defaultArch" .ctx)) }}
{{- end }}
{{- with $sel }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* The jail PVC of an architecture; pass (dict "ctx" $ "arch" ARCH). The
     default architecture's is `jailClaim`; another's
     `<fullname>-jail-<arch>` or jail.<arch>.persistence.existingClaim. */}}
{{- define "slurm-cluster.archJailClaim" -}}
{{- if eq .arch (include "slurm-cluster.defaultArch" .ctx) }}
{{- include "slurm-cluster.jailClaim" .ctx }}
{{- else }}
{{- $j := index .ctx.Values.jail .arch }}
{{- default (printf "%s-jail-%s" (include "slurm-cluster.fullname" .ctx) .arch) $j.persistence.existingClaim }}
{{- end }}
{{- end }}

{{/* chroot.so settings of a nodeset for its architecture (docs/contract.md)
     as a JSON list: on another architecture than the default, its own jail
     is mounted at the jail path, and the users' homes, which live in the
     default jail, are mounted at /home in slurmd's container and bound into
     that jail at /home (chroot.so(8), ARCHITECTURES). */}}
{{- define "slurm-cluster.nodesetArchArgs" -}}
{{- $default := include "slurm-cluster.defaultArch" . }}
{{- if ne (.arch | default $default) $default }}
{{- list "bind=/home" | toJson }}
{{- else }}
{{- list | toJson }}
{{- end }}
{{- end }}

{{/* "true" when a nodeset has a plugin line of its own
     (plugstack-<nodeset>.conf): GPU or architecture settings. */}}
{{- define "slurm-cluster.nodesetOwnPlugin" -}}
{{- or (include "slurm-cluster.nodesetGpuArgs" . | fromJsonArray) (include "slurm-cluster.nodesetArchArgs" . | fromJsonArray) | empty | not }}
{{- end }}

{{/* The Slurm release (slurm.release) as "MAJOR.MINOR"; fails on one the
images are not built for. A number (--set slurm.release=26.05) is accepted
as the release it spells. */}}
{{- define "slurm-cluster.slurmRelease" -}}
{{- $rel := toString .Values.slurm.release }}
{{- $supported := list "22.05" "24.11" "26.05" }}
{{- if not (has $rel $supported) }}
{{- fail (printf "slurm.release: %q is not a Slurm release this chart runs; supported: %s (quote it: --set-string slurm.release=24.11)" $rel (join ", " $supported)) }}
{{- end }}
{{- $rel }}
{{- end }}

{{/* "true" when the release's slurmd loads the job container as a
namespace plugin (NamespaceType, Slurm 25.11 and later). */}}
{{- define "slurm-cluster.namespacePlugin" -}}
{{- ge (float64 (include "slurm-cluster.slurmRelease" .)) 25.11 }}
{{- end }}

{{- define "slurm-cluster.imagePullSecrets" -}}
{{- with .Values.image.pullSecrets }}
imagePullSecrets:
{{- range . }}
  - name: {{ . }}
{{- end }}
{{- end }}
{{- end }}

{{/* The enabled nodesets, each merged key by key over nodesetDefaults,
     as a YAML map name -> settings (use with fromYaml). */}}
{{- define "slurm-cluster.nodesets" -}}
{{- $out := dict }}
{{- range $name, $entry := .Values.nodesets }}
{{- $ns := deepCopy $.Values.nodesetDefaults }}
{{- range $k, $v := ($entry | default dict) }}
{{- $_ := set $ns $k $v }}
{{- end }}
{{- if $ns.enabled }}
{{- $_ := set $out $name $ns }}
{{- end }}
{{- end }}
{{- toYaml $out }}
{{- end }}

{{/* The Slurm feature every node of a nodeset registers with; slurm.conf's
     NodeSet=<nodeset> selects the nodeset's nodes by it. */}}
{{- define "slurm-cluster.nodesetFeature" -}}
nodeset-{{ . }}
{{- end }}

{{/* Node-line parameters a worker of the nodeset registers with
     (slurmd -Z --conf), from the nodeset's values; pass
     (dict "name" NAME "ns" NODESET). */}}
{{- define "slurm-cluster.dynamicNodeConf" -}}
{{- $ns := .ns }}
{{- $features := prepend ($ns.features | default list) (include "slurm-cluster.nodesetFeature" .name) | uniq }}
{{- $gres := $ns.gres | default list }}
{{- if gt (int $ns.gpus) 0 }}{{ $gres = prepend $gres (printf "gpu:%d" (int $ns.gpus)) }}{{ end }}
{{- $parts := list (printf "Features=%s" (join "," $features)) }}
{{- with $gres }}{{ $parts = append $parts (printf "Gres=%s" (join "," .)) }}{{ end }}
{{- if gt (int $ns.cpus) 0 }}{{ $parts = append $parts (printf "CPUs=%d" (int64 $ns.cpus)) }}{{ end }}
{{- if gt (int $ns.realMemory) 0 }}{{ $parts = append $parts (printf "RealMemory=%d" (int64 $ns.realMemory)) }}{{ end }}
{{- with $ns.nodeConfig }}{{ $parts = append $parts . }}{{ end }}
{{- join " " $parts }}
{{- end }}

{{/* Headless Service name of a nodeset. */}}
{{- define "slurm-cluster.nodesetService" -}}
{{- printf "%s-%s" (include "slurm-cluster.fullname" .ctx) .name }}
{{- end }}

{{- define "slurm-cluster.controllerHost" -}}
{{- include "slurm-cluster.fullname" . }}-controller-0
{{- end }}

{{- define "slurm-cluster.controllerAddr" -}}
{{- $f := include "slurm-cluster.fullname" . }}
{{- printf "%s-controller-0.%s-controller.%s.svc.%s" $f $f .Release.Namespace .Values.clusterDomain }}
{{- end }}

{{- define "slurm-cluster.mungeSecret" -}}
{{- default (printf "%s-munge" (include "slurm-cluster.fullname" .)) .Values.munge.existingSecret }}
{{- end }}

{{- define "slurm-cluster.jailClaim" -}}
{{- default (printf "%s-jail" (include "slurm-cluster.fullname" .)) .Values.jail.persistence.existingClaim }}
{{- end }}

{{- define "slurm-cluster.hostKeysSecret" -}}
{{- default (printf "%s-ssh-host-keys" (include "slurm-cluster.fullname" .)) .Values.login.hostKeys.existingSecret }}
{{- end }}

{{/* true when some enabled nodeset runs the GPU health check */}}
{{- define "slurm-cluster.gpuHealthCheck" -}}
{{- $any := false }}
{{- range $name, $ns := (include "slurm-cluster.nodesets" . | fromYaml) }}
{{- if and (gt (int $ns.gpus) 0) $ns.gpuHealthCheck }}{{ $any = true }}{{ end }}
{{- end }}
{{- $any }}
{{- end }}

{{/* true when slurmd runs a HealthCheckProgram: the jail check on every
     node (healthChecks.jailCheck), or the GPU check on some nodeset */}}
{{- define "slurm-cluster.healthCheck" -}}
{{- or .Values.healthChecks.jailCheck (eq (include "slurm-cluster.gpuHealthCheck" .) "true") }}
{{- end }}

{{- define "slurm-cluster.usesCgroup" -}}
{{- or (contains "cgroup" .Values.slurmConfig.proctrackType) (contains "cgroup" .Values.slurmConfig.taskPlugin) }}
{{- end }}

{{/* Volumes every Slurm pod (controller, worker, login, test) shares. */}}
{{- define "slurm-cluster.slurmVolumes" -}}
- name: slurm-config
  configMap:
    name: {{ include "slurm-cluster.fullname" . }}-slurm-config
{{ include "slurm-cluster.mungeKeyVolume" . }}
{{- end }}

{{- define "slurm-cluster.mungeKeyVolume" -}}
- name: munge-key
  secret:
    secretName: {{ include "slurm-cluster.mungeSecret" . }}
    defaultMode: 0400
{{- end }}

{{/* chroot.so's GPU settings of a nodeset (docs/contract.md) as a JSON list:
     gpu= from gpuDriver, else gpu=on when the nodeset has GPUs (no job
     starts on a node whose driver cannot be bound); gpu_driver_root= from
     gpuDriverRoot. Empty: the nodeset uses the shared plugstack.conf. */}}
{{- define "slurm-cluster.nodesetGpuArgs" -}}
{{- $args := list }}
{{- with (.gpuDriver | default (ternary "on" "" (gt (int .gpus) 0))) }}
{{- $args = append $args (printf "gpu=%s" .) }}
{{- end }}
{{- with .gpuDriverRoot }}{{ $args = append $args (printf "gpu_driver_root=%s" .) }}{{ end }}
{{- toJson $args }}
{{- end }}

{{/* The chroot.so line of plugstack.conf; pass (dict "ctx" $ "gpu" LIST
     "arch" LIST), the LISTs a nodeset's nodesetGpuArgs and nodesetArchArgs
     (empty for the shared line). A nodeset's GPU settings replace the same
     keys of plugin.extraArgs; its architecture's binds come on top. */}}
{{- define "slurm-cluster.pluginLine" -}}
{{- $ctx := .ctx }}
{{- $gpu := .gpu | default list }}
{{- $own := list }}
{{- range $gpu }}{{ $own = append $own (first (splitList "=" .)) }}{{ end }}
{{- $args := prepend (.arch | default list) (printf "jail=%s" (include "slurm-cluster.jailPath" $ctx)) }}
{{- if $ctx.Values.healthChecks.nccl.enabled }}
{{- $args = append $args "bind=/etc/slurm-jail:/etc/slurm-jail:ro" }}
{{- end }}
{{- range $ctx.Values.plugin.extraArgs }}
{{- if not (has (first (splitList "=" .)) $own) }}{{ $args = append $args . }}{{ end }}
{{- end }}
{{- printf "required chroot.so %s" (concat $args $gpu | join " ") }}
{{- end }}

{{/* A worker's Slurm volumes; pass (dict "ctx" $ "name" NODESET "ns" VALUES).
     A nodeset with GPU or architecture settings of its own sees its
     plugstack-NODESET.conf as /etc/slurm/plugstack.conf (the only file that
     differs). */}}
{{- define "slurm-cluster.workerSlurmVolumes" -}}
{{- $ctx := .ctx }}
{{- if eq (include "slurm-cluster.nodesetOwnPlugin" .ns) "true" }}
- name: slurm-config
  configMap:
    name: {{ include "slurm-cluster.fullname" $ctx }}-slurm-config
    items:
      - {key: slurm.conf, path: slurm.conf}
      - {key: plugstack-{{ .name }}.conf, path: plugstack.conf}
      - {key: gres.conf, path: gres.conf}
      {{- if eq (include "slurm-cluster.usesCgroup" $ctx) "true" }}
      - {key: cgroup.conf, path: cgroup.conf}
      {{- end }}
{{ include "slurm-cluster.mungeKeyVolume" $ctx }}
{{- else }}
{{- include "slurm-cluster.slurmVolumes" $ctx }}
{{- end }}
{{- end }}

{{- define "slurm-cluster.slurmVolumeMounts" -}}
- name: slurm-config
  mountPath: /etc/slurm
  readOnly: true
- name: munge-key
  mountPath: /etc/munge-secret
  readOnly: true
{{- end }}

{{/* Checksum of the Slurm config, so that pods restart when it changes. */}}
{{- define "slurm-cluster.configChecksum" -}}
{{- include (print .Template.BasePath "/config/slurm-config.yaml") . | sha256sum }}
{{- end }}

{{/* The jail's mount path, fixed by docs/contract.md (the images' login
     ChrootDirectory and the plugin line both use it). */}}
{{- define "slurm-cluster.jailPath" -}}
/mnt/jail
{{- end }}

{{/* A value of a Secret the chart generates once and keeps: the value already
     in the cluster (`lookup` on `helm upgrade`), else a new one; base64.
     Offline `helm template` has no cluster to ask and always generates.
     Pass (dict "ctx" $ "secret" NAME "key" KEY "generate" HOW), HOW one of
       munge-key  1024 random bytes
       ssh-ecdsa  an OpenSSH-readable ECDSA host key (PEM)
       ssh-rsa    an RSA host key (PEM)
       password   32 random letters and digits
     (OpenSSH cannot read the PKCS#8 PEM genPrivateKey gives for ed25519.) */}}
{{- define "slurm-cluster.keptSecretValue" -}}
{{- $old := (lookup "v1" "Secret" .ctx.Release.Namespace .secret).data | default dict }}
{{- if index $old .key }}{{ index $old .key }}
{{- else if eq .generate "munge-key" }}{{ randBytes 1024 }}
{{- else if eq .generate "ssh-ecdsa" }}{{ genPrivateKey "ecdsa" | b64enc }}
{{- else if eq .generate "ssh-rsa" }}{{ genPrivateKey "rsa" | b64enc }}
{{- else if eq .generate "password" }}{{ randAlphaNum 32 | b64enc }}
{{- else }}{{ fail (printf "keptSecretValue: unknown generator %q" .generate) }}
{{- end }}
{{- end }}

{{/* Metadata of a Secret the chart generates and keeps: helm uninstall leaves
     it, so a reinstall finds the same keys. Pass (dict "ctx" $ "name" NAME
     "component" COMPONENT). */}}
{{- define "slurm-cluster.keptSecretMetadata" -}}
metadata:
  name: {{ .name }}
  namespace: {{ .ctx.Release.Namespace }}
  labels:
    {{- include "slurm-cluster.labels" (dict "ctx" .ctx "component" .component) | nindent 4 }}
  annotations:
    helm.sh/resource-policy: keep
{{- end }}
