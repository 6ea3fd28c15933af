//! Tests of the install manifests in `deploy/` and of capw's CRDs against a real
//! kube-apiserver; the tests are in `tests/deploy/`.
