//! Tests of the install manifests in `deploy/`, of capw's CRDs and of the controller image
//! against a real kube-apiserver and a real registry; the tests are in `tests/deploy/`.
