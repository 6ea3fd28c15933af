//! `deploy/` installs on a real API server, and its RBAC grants the controller what it needs
//! and nothing more.

use capw_test_support::kube::KubeEnv;

use crate::{deploy_dir, succeeded};

const CONTROLLER: &str = "system:serviceaccount:capw-system:capw-controller";

/// Whether the controller's service account may do what `args` ask (`kubectl auth can-i`).
fn controller_can(env: &KubeEnv, args: &[&str]) -> bool {
    let out = env
        .kubectl()
        .args(["auth", "can-i", "--as", CONTROLLER])
        .args(args)
        .output()
        .unwrap();
    let answer = String::from_utf8_lossy(&out.stdout).trim().to_string();
    match answer.as_str() {
        "yes" => true,
        "no" => false,
        _ => panic!(
            "kubectl auth can-i {args:?}: {answer}\n{}",
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

#[test]
fn deploy_validates_on_the_server_then_installs() {
    // An API server of its own: installing registers the admission webhook for every capw
    // object, and no controller runs here to answer it.
    let env = &KubeEnv::start();
    let deploy = deploy_dir();
    // A server-side dry run of namespaced objects needs their namespace to exist.
    succeeded(
        "kubectl apply namespace.yaml",
        env.kubectl()
            .args(["apply", "--server-side", "-f"])
            .arg(deploy.join("namespace.yaml"))
            .output()
            .unwrap(),
    );
    let dry_run = succeeded(
        "kubectl apply --dry-run=server -k deploy/",
        env.kubectl()
            .args(["apply", "--server-side", "--dry-run=server", "-k"])
            .arg(&deploy)
            .output()
            .unwrap(),
    );
    for object in [
        "customresourcedefinition.apiextensions.k8s.io/clusters.capw.dev",
        "serviceaccount/capw-controller",
        "clusterrole.rbac.authorization.k8s.io/capw-controller",
        "role.rbac.authorization.k8s.io/capw-controller",
        "clusterrole.rbac.authorization.k8s.io/capw-cluster-secrets",
        "rolebinding.rbac.authorization.k8s.io/capw-cluster-secrets",
        "clusterrole.rbac.authorization.k8s.io/capw-hosted-control-planes",
        "rolebinding.rbac.authorization.k8s.io/capw-hosted-control-planes",
        "deployment.apps/capw-controller",
        "service/capw-webhook",
        "validatingwebhookconfiguration.admissionregistration.k8s.io/capw",
    ] {
        assert!(dry_run.contains(object), "{object} missing in:\n{dry_run}");
    }

    succeeded(
        "kubectl apply -k deploy/",
        env.kubectl()
            .args(["apply", "--server-side", "-k"])
            .arg(&deploy)
            .output()
            .unwrap(),
    );
    // `kubectl auth can-i` arguments, and whether the controller may.
    let cases = [
        ("update clusters.capw.dev -A", true),
        ("patch clusters.capw.dev --subresource=status -A", true),
        ("update machines.capw.dev --subresource=finalizers -A", true),
        ("watch wasmproviders.capw.dev -A", true),
        ("get secrets -A", true),
        ("watch secrets -A", true),
        // Writing Secrets only where Clusters live (`default` in deploy/).
        ("create secrets -n default", true),
        ("update secrets -n default", true),
        ("delete secrets -n default", true),
        ("create secrets -A", false),
        ("delete secrets -A", false),
        ("delete secrets -n kube-system", false),
        ("update secrets -n capw-system", false),
        (
            "update clusterinfrastructures.capw.dev --subresource=status -A",
            true,
        ),
        ("create events.events.k8s.io -A", true),
        ("create leases.coordination.k8s.io -n capw-system", true),
        ("create leases.coordination.k8s.io -n default", false),
        ("get configmaps -n capw-system", true),
        ("update configmaps -n capw-system", false),
        // Hosted control planes' workloads, only where Clusters live.
        ("create deployments.apps -n default", true),
        ("patch statefulsets.apps -n default", true),
        ("delete services -n default", true),
        ("watch configmaps -n default", true),
        ("update configmaps -n default", true),
        // Watched everywhere, written only where Clusters live.
        ("watch deployments.apps -A", true),
        ("list statefulsets.apps -A", true),
        ("list services -A", false),
        ("create deployments.apps -n kube-system", false),
        ("delete statefulsets.apps -n capw-system", false),
        ("patch services -n kube-system", false),
        ("get configmaps -n kube-system", false),
        ("create pods -n default", false),
        ("create daemonsets.apps -n default", false),
        ("create pods -n capw-system", false),
        (
            "create customresourcedefinitions.apiextensions.k8s.io",
            false,
        ),
        (
            "create clusterrolebindings.rbac.authorization.k8s.io",
            false,
        ),
    ];
    for (question, expected) in cases {
        let args: Vec<&str> = question.split_whitespace().collect();
        assert_eq!(
            controller_can(env, &args),
            expected,
            "may the controller {question}?"
        );
    }
}
