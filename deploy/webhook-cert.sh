#!/usr/bin/env bash
# Makes the admission webhook's certificate: a CA and a serving certificate for the Service
# capw-webhook.capw-system.svc, signed by it (openssl). Stores the pair as the Secret
# capw-system/capw-webhook-tls and the CA as the webhook configuration's caBundle.
# Run again to rotate both: the controller serves the new certificate without a restart.
#
#   deploy/webhook-cert.sh [--days N] [kubectl flags such as --context]
set -euo pipefail
days=365
if [[ ${1:-} == --days ]]; then days=$2; shift 2; fi
kubectl=(kubectl "$@")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
service=capw-webhook.capw-system.svc
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days "$days" \
	-subj "/CN=capw webhook CA" -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=$service" \
	-keyout "$dir/tls.key" -out "$dir/tls.csr" 2>/dev/null
printf 'subjectAltName=DNS:%s,DNS:%s.cluster.local\n' "$service" "$service" > "$dir/ext"
openssl x509 -req -in "$dir/tls.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial \
	-days "$days" -extfile "$dir/ext" -out "$dir/tls.crt" 2>/dev/null
"${kubectl[@]}" -n capw-system create secret tls capw-webhook-tls \
	--cert "$dir/tls.crt" --key "$dir/tls.key" --dry-run=client -o yaml |
	"${kubectl[@]}" apply -f - >/dev/null
bundle=$(base64 -w0 < "$dir/ca.crt")
"${kubectl[@]}" patch validatingwebhookconfiguration capw --type=json \
	-p "[{\"op\": \"add\", \"path\": \"/webhooks/0/clientConfig/caBundle\", \"value\": \"$bundle\"}]" >/dev/null
echo "capw-system/capw-webhook-tls and the caBundle of validatingwebhookconfiguration/capw: valid for $days days"
